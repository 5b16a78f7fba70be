"""The replication stage: published figures read and checked, Hedges' g aggregated the paper's
way with a bootstrap, each figure compared with ours (docs/replication.md)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow import stats, tables
from storyflow.errors import StoryflowError
from storyflow.replication import agreement, papers, published
from storyflow.replication.agreement import Ours
from storyflow.replication.effects import aggregated_g
from storyflow.replication.fiction_flows import histories, parse_setting


@pytest.mark.parametrize("paper", published.PAPERS)
def test_every_papers_published_figures_read_and_cite_a_line_of_the_paper(paper: str) -> None:
    figures = published.read(published.path_of(paper))
    assert len(figures) >= 3
    papers_dir = Path(__file__).resolve().parents[2] / "shared" / "papers"
    text = papers_dir / f"{paper}.txt"
    if text.is_file():
        n_lines = len(text.read_text().splitlines())
        for source in figures["source"]:
            line = int(source.split(" l. ")[1].split()[0].split("-")[0].rstrip(","))
            assert source.startswith(f"{paper}.txt") and 1 <= line <= n_lines, source


def test_a_published_file_with_a_repeated_id_or_no_value_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "id,source,corpus,quantity,setting,group,model,value,direction,claim\n"
        "a,x.txt l. 3,hippocorpus,hedges_g,,g,mean,0.5,,one\n"
        "a,x.txt l. 4,hippocorpus,hedges_g,,g,mean,,,two\n"
        "b,somewhere,hippocorpus,hedges_g,,g,mean,abc,,three\n"
    )
    with pytest.raises(StoryflowError) as err:
        published.read(bad)
    message = str(err.value)
    assert "ids given twice: a" in message
    assert "rows 3: neither a value nor a direction" in message
    assert "rows 4: value is not a number" in message
    assert "rows 4: source names no" in message


def _scores(seed: int, shift: float, n_a: int = 14, n_b: int = 17) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        (f"{g}{i}", m, h, rng.normal(shift if g == "a" else 0.0, 1.0))
        for m in ("m1", "m2", "m3")
        for h in ("1", "2", "3", "4")
        for g, n in (("a", n_a), ("b", n_b))
        for i in range(n)
    ]
    return pd.DataFrame(rows, columns=["story_id", "model", "history", "seq"])


def _groups(scores: pd.DataFrame) -> tuple[set[str], set[str]]:
    ids = set(scores["story_id"])
    return {s for s in ids if s[0] == "a"}, {s for s in ids if s[0] == "b"}


@pytest.mark.parametrize("over", ["median", "mean"])
def test_the_aggregate_is_each_models_summary_of_hedges_g_over_h_then_their_mean(over) -> None:
    scores = _scores(1, 0.6)
    a, b = _groups(scores)
    result = aggregated_g(
        scores, a, b, measure="seq", models=["m1", "m2", "m3"], histories=["1", "2", "3", "4"],
        over_histories=over, confidence=0.95, replicates=400, seed=7,
    )  # fmt: skip
    summarise = np.median if over == "median" else np.mean
    for model in ("m1", "m2", "m3"):
        gs = []
        for h in ("1", "2", "3", "4"):
            cell = scores[(scores["model"] == model) & (scores["history"] == h)]
            gs.append(
                stats.hedges_g(
                    cell[cell["story_id"].isin(a)]["seq"],
                    cell[cell["story_id"].isin(b)]["seq"],
                    0.95,
                )[0]
            )
        assert result.per_model[model] == pytest.approx(summarise(gs), abs=1e-12)
    assert result.value == pytest.approx(np.mean(list(result.per_model.values())), abs=1e-12)
    assert result.ci[0] < result.value < result.ci[1]
    assert (result.n_a, result.n_b) == (14, 17)


def test_the_bootstrap_interval_is_seeded_and_narrows_with_more_stories() -> None:
    small = _scores(2, 0.5)
    large = _scores(2, 0.5, n_a=140, n_b=170)
    kw = dict(
        measure="seq", models=["m1", "m2"], histories=["1", "2"], over_histories="median",
        confidence=0.95, replicates=500,
    )  # fmt: skip
    one = aggregated_g(small, *_groups(small), seed=3, **kw)
    again = aggregated_g(small, *_groups(small), seed=3, **kw)
    other = aggregated_g(small, *_groups(small), seed=4, **kw)
    wide = aggregated_g(large, *_groups(large), seed=3, **kw)
    assert one.ci == again.ci and one.ci != other.ci
    assert wide.ci[1] - wide.ci[0] < (one.ci[1] - one.ci[0]) / 2


def test_a_story_a_model_did_not_score_is_left_out_of_that_models_g_only() -> None:
    scores = _scores(5, 0.4)
    dropped = scores[~((scores["model"] == "m1") & (scores["story_id"] == "a0"))]
    a, b = _groups(scores)
    kw = dict(
        measure="seq", histories=["1"], over_histories="median", confidence=0.9,
        replicates=200, seed=1,
    )  # fmt: skip
    full = aggregated_g(dropped, a, b, models=["m1", "m2"], **kw)
    cell = dropped[(dropped["model"] == "m1") & (dropped["history"] == "1")]
    m1 = stats.hedges_g(
        cell[cell["story_id"].isin(a)]["seq"], cell[cell["story_id"].isin(b)]["seq"], 0.95
    )[0]
    assert full.per_model["m1"] == pytest.approx(m1, abs=1e-12)
    assert full.n_a == 13  # stories scored by every model


def _published(value: float, direction: str = "") -> dict[str, object]:
    return {"id": "x", "value": value, "direction": direction}


def test_agreement_reads_direction_and_interval() -> None:
    same = Ours(0.3, (0.1, 0.6), "", "9 vs 9", "m", "not checked", "", True)
    assert agreement.compare(_published(0.5), same) == {
        "direction_agrees": "yes",
        "ci_covers": "yes",
        "verdict": "same direction, CI covers it",
    }
    low = Ours(0.05, (0.01, 0.2), "", "", "", "", "", True)
    assert agreement.compare(_published(0.5), low)["verdict"] == (
        "same direction, CI excludes it (ours lower)"
    )
    opposite = Ours(-0.2, (-0.4, 0.1), "", "", "", "", "", True)
    result = agreement.compare(_published(0.5), opposite)
    assert (result["direction_agrees"], result["ci_covers"]) == ("no", "no")
    share = Ours(0.97, (0.9, 1.0), "", "", "", "", "", False)  # a share has no direction
    assert agreement.compare(_published(0.45), share) == {
        "direction_agrees": "n/a",
        "ci_covers": "no",
        "verdict": "CI excludes it (ours higher)",
    }
    order = Ours(math.nan, (math.nan, math.nan), "human > llm", "", "", "", "", False)
    assert agreement.compare(_published(math.nan, "human > llm"), order)["verdict"] == "same order"
    flipped = Ours(math.nan, (math.nan, math.nan), "llm > human", "", "", "", "", False)
    assert (
        agreement.compare(_published(math.nan, "human > llm"), flipped)["direction_agrees"] == "no"
    )
    missing = Ours.missing("books are off")
    assert agreement.compare(_published(0.5), missing)["verdict"] == "not computed: books are off"


def test_settings_and_histories_parse() -> None:
    assert parse_setting("formulation=topic; measure=seq; h=1-9") == {
        "formulation": "topic",
        "measure": "seq",
        "h": "1-9",
    }
    assert histories("1-3") == ["1", "2", "3"] and histories("1,3,9") == ["1", "3", "9"]


def test_fiction_flows_rows_use_the_models_of_the_tables_kind(tmp_path: Path) -> None:
    """A base model stands for the paper's base-model tables, an instruct model for A7-A9; a row
    of a model the run lacks says which model it needed."""
    rng = np.random.default_rng(0)
    shift = {"recalled": 0.0, "retold": 0.1, "imagined": 0.5}
    ids = [(t, f"{t}{i}") for t in shift for i in range(10)]
    files: dict[str, list[str]] = {"hippocorpus": []}
    for model in ("base-model", "chat-model"):
        rows = [
            (s, t, model, f, h, 8, rng.normal(shift[t], 1), 3.0, 3.0, False)
            for f in ("topic", "context")
            for h in [*map(str, range(10)), "full"]
            for t, s in ids
        ]
        frame = tables.STORY_SEQUENTIALITY.frame(rows)
        path = tmp_path / f"{model}.parquet"
        frame.to_parquet(path)
        files["hippocorpus"].append(str(path))
    pd.DataFrame({"story_id": [s for _, s in ids], "story_type": [t for t, _ in ids]}).to_parquet(
        tmp_path / "labels.parquet"
    )
    files |= {
        "hippocorpus_labels": [str(tmp_path / "labels.parquet")],
        "published": [str(published.path_of("fiction_flows"))],
    }
    settings = {
        "confidence": 0.95, "bootstrap": 300, "seed": 1, "min_group_size": 5,
        "min_sentences": 2,
        "models": {
            "base-model": {"family": "Gemma 3", "size": "270M", "variant": "base"},
            "chat-model": {"family": "Qwen3", "size": "8B", "variant": "instruct"},
        },
        "contrasts": {"hippocorpus": [
            {"name": "imagined_vs_recalled", "a": "imagined", "b": "recalled"},
            {"name": "retold_vs_recalled", "a": "retold", "b": "recalled"},
        ]},
    }  # fmt: skip
    table = papers.compare("fiction_flows", files, settings).set_index("id")
    a1 = table.loc["A1.topic.imagined_vs_recalled.mean"]
    assert a1["models"] == "base-model" and a1["n"] == "10 vs 10 stories"
    assert a1["ci_low"] < a1["ours"] < a1["ci_high"]
    a7 = table.loc["A7.topic.imagined_vs_recalled.qwen3-8b-i"]
    assert a7["models"] == "chat-model" and math.isfinite(a7["ours"])
    gpt2 = table.loc["A1.topic.imagined_vs_recalled.gpt2"]
    assert gpt2["verdict"] == "not computed: no GPT-2 1.5B base model in this run"
    books = table.loc["S5.3.nll_base.fic1p_vs_autobiography.mean"]
    assert books["verdict"] == "not computed: books is not scored in this run"
    assert table.loc["S5.4.gain.h1.others", "verdict"].startswith("not computed: the regressions")


def _effects_row(judge: str, diff: float, valid: bool) -> dict[str, object]:
    return {
        "model": "forecaster", "judge": judge, "k": 4, "contrast": "Human vs all LLMs",
        "group_a": "Human", "group_b": "all LLMs", "measure": "no_rate",
        "artefacts": "included", "pairing": "prompt", "n_a": 12, "n_b": 72, "mean_a": 0.6,
        "mean_b": 0.6 - diff, "diff": diff, "diff_ci_low": diff - 0.05,
        "diff_ci_high": diff + 0.05, "t": 1.0, "p_t": 0.3, "w": 1.0, "p_w": 0.3, "g": 0.2,
        "g_ci_low": -0.1, "g_ci_high": 0.5, "tested": True, "flag": "", "valid": valid,
        "failed": "" if valid else "judge forecaster balanced_accuracy",
    }  # fmt: skip


def test_hundred_endings_tests_the_human_above_llm_order_on_hanna(tmp_path: Path) -> None:
    """The paper's 'every human corpus above the top LLMs' is read on HANNA's paired contrast,
    from a valid LLM judge before the embedding judge; rows of corpora storyflow lacks say so."""
    effects = tables.TENSION_EFFECTS.frame(
        pd.DataFrame(
            [
                _effects_row("embedding", 0.10, True),
                _effects_row("llm-judge", -0.04, True),
                _effects_row("failed-judge", 0.3, False),
            ]
        )
    )
    effects.to_csv(tmp_path / "effects.csv", index=False)
    files = {
        "published": [str(published.path_of("hundred_endings_tension"))],
        "hanna_effects": [str(tmp_path / "effects.csv")],
    }
    table = papers.compare("hundred_endings_tension", files, {}).set_index("id")
    row = table.loc["F8.no_rate.human-above-top10_llm"]
    assert row["ours"] == pytest.approx(-0.04) and "judge llm-judge" in row["models"]
    assert row["ours_direction"] == "top10_llm > every human corpus"
    assert row["direction_agrees"] == "no" and row["validity"] == "valid"
    assert "New Yorker" in table.loc["F8.no_rate.new_yorker-highest", "note"]
    assert table.loc["A.no_rate.pipeline-above-vanilla", "verdict"].startswith("not computed")


def test_flawed_fictions_reads_the_baselines_on_the_benchmark_only(tmp_path: Path) -> None:
    """The published baselines are read on the benchmark's scores (always-no, random, the NLI
    stand-in); without the benchmark file every row says why; a paper model storyflow does not
    run is not computed."""
    rows = []
    for detector, kind, full in (
        ("baseline:always-no", "baseline", 0.5),
        ("baseline:random", "baseline", 0.02),
        ("nli:qwen", "nli", 0.07),
    ):
        rows.append(
            {
                "corpus": "flawedfictions", "maker": "flawedfictions", "detector": detector,
                "kind": kind, "n": 414, "n_flawed": 207, "accuracy": 0.5, "ceeval_full": full,
                "ceeval_ci_low": full - 0.03, "ceeval_ci_high": full + 0.03, "ceeval_pos": 0.0,
                "precision": math.nan, "recall": 0.0, "specificity": 1.0, "n_unparseable": 0,
                "unparseable_policy": "wrong", "n_excluded": 0, "n_left_out": 0,
                "verification": "published", "valid": None,
                "validity": "not checked (a baseline: the reference)",
            }
        )  # fmt: skip
    tables.PLOT_HOLE_SCORES.frame(pd.DataFrame(rows)).to_csv(tmp_path / "s.csv", index=False)
    paper = {"published": [str(published.path_of("flawed_fictions"))]}
    with_file = papers.compare(
        "flawed_fictions", {**paper, "benchmark_scores": [str(tmp_path / "s.csv")]}, {}
    ).set_index("id")
    always_no = with_file.loc["T5.ceeval_full.always-no-error-baseline"]
    assert always_no["ours"] == 0.5 and always_no["ci_covers"] == "yes"
    assert always_no["validity"] == "not checked (a baseline: the reference)"
    nli = with_file.loc["T5.ceeval_full.entailment-baseline"]
    assert nli["models"] == "nli:qwen" and "DeBERTa" in nli["note"]
    assert with_file.loc["T5.ceeval_full.human-performance", "verdict"].startswith("not computed")
    without = papers.compare("flawed_fictions", paper, {}).set_index("id")
    assert "plot_holes.benchmark" in without.loc["T5.ceeval_full.random-baseline", "note"]


def test_narrative_sense_compares_the_human_share_and_the_order_on_hanna(tmp_path: Path) -> None:
    """The human share gets a Wilson interval over HANNA's tested human stories; the order
    'human above every generator' names the LLM groups that reach the human share."""
    groups = pd.DataFrame(
        {
            "group": ["Human", "Llama-7b", "Mistral-7b"],
            "n_stories": [96, 96, 96], "n_excluded": [8, 8, 8], "n_tested": [88, 88, 88],
            "n_exceeding": [44, 40, 50], "share_exceeding": [0.5, 40 / 88, 50 / 88],
        }
    )  # fmt: skip
    groups.to_csv(tmp_path / "ns.csv", index=False)
    scores = pd.DataFrame(
        {
            "story_id": ["Human-0", "Human-1", "Llama-7b-0"],
            "group": ["Human", "Human", "Llama-7b"],
            "n_lemmas": [30, 40, 35], "seen_share": [0.6, 0.8, 0.7], "included": [True, True, True],
        }
    )  # fmt: skip
    scores.to_parquet(tmp_path / "scores.parquet")
    pd.DataFrame({"pmi": [-12.0, -9.0, -5.0]}).to_parquet(tmp_path / "pmi.parquet")
    files = {
        "published": [str(published.path_of("narrative_sense_pmi"))],
        "hanna_table": [str(tmp_path / "ns.csv")],
        "hanna_scores": [str(tmp_path / "scores.parquet")],
        "pmi": [str(tmp_path / "pmi.parquet")],
    }
    settings = {"confidence": 0.95, "reference": ["rocstories", "books"]}
    table = papers.compare("narrative_sense_pmi", files, settings).set_index("id")
    human = table.loc["T4.share.human"]
    assert human["ours"] == 0.5 and human["ci_low"] < 0.5 < human["ci_high"]
    assert human["ci_covers"] == "yes"  # published 0.547 lies inside [0.40, 0.60]
    order = table.loc["T4.order.human-highest"]
    assert order["ours_direction"] == "Mistral-7b >= human" and order["direction_agrees"] == "no"
    assert table.loc["T2.seen_share.human", "ours"] == pytest.approx(0.7)
    assert (
        table.loc["PMI.floor", "ours"] == -12.0
        and "rocstories, books" in table.loc["PMI.floor", "note"]
    )
    assert table.loc["T4.share.gpt2", "verdict"].startswith("not computed: GPT-2 is not among")


def _fei_row(pool: str, condition: str, diff: float, headline: bool) -> dict[str, object]:
    return {
        "pool": pool, "readers": "reader/standard", "n_readers": 1, "population": 5,
        "valid": True, "note": "", "kind": "etc", "condition": condition, "measure": "soft",
        "headline": headline, "n": 16, "tested": True, "mean_original": 0.5,
        "ci_low_original": 0.45, "ci_high_original": 0.55, "mean_corrupted": 0.5 + diff,
        "ci_low_corrupted": 0.45 + diff, "ci_high_corrupted": 0.55 + diff, "diff": diff,
        "diff_ci_low": diff - 0.02, "diff_ci_high": diff + 0.02, "wilcoxon_p": 0.03, "g": 0.3,
        "g_ci_low": 0.0, "g_ci_high": 0.6,
    }  # fmt: skip


def test_fabula_entropy_reads_the_headline_shuffle_difference(tmp_path: Path) -> None:
    """ETC's 'corrupted above original' is read on the headline row of the shuffled version
    (not the wrong ending, not a non-headline pool); EWC without a corpus says so."""
    rows = [
        _fei_row("reader/standard", "shuffle", -0.5, False),
        _fei_row("pooled", "shuffle", -0.01, True),
        _fei_row("pooled", "wrong_ending", 0.06, True),
    ]
    tables.FEI_COMPARISON.frame(pd.DataFrame(rows)).to_csv(tmp_path / "c.csv", index=False)
    files = {
        "published": [str(published.path_of("fabula_entropy_indexing"))],
        "rocstories_comparison": [str(tmp_path / "c.csv")],
    }
    table = papers.compare("fabula_entropy_indexing", files, {}).set_index("id")
    etc = table.loc["F1.etc.corrupted-gt-original"]
    assert etc["ours"] == pytest.approx(-0.01) and etc["ours_direction"] == "original > corrupted"
    assert etc["direction_agrees"] == "no" and "wrong_ending +0.060" in etc["note"]
    assert table.loc["F2.ewc.corrupted-gt-original", "verdict"].startswith("not computed")


def _story_indices(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    """FEI_STORY_INDICES rows of pool 'pooled' from (story, kind, condition, soft index)."""
    fixed = {
        "pool": "pooled", "readers": "reader/standard", "n_readers": 1, "population": 5,
        "valid": True, "note": "", "k": 0, "n_passages": 1, "n_questions": 4, "hard": 0.0,
        "disagreement": 0.0,
    }  # fmt: skip
    records = [
        {**fixed, "story_id": sid, "version": condition, "condition": condition}
        | {"kind": kind, "soft": soft, "reader_entropy": soft}
        for sid, kind, condition, soft in rows
    ]
    return tables.FEI_STORY_INDICES.frame(pd.DataFrame(records))


def test_fabula_entropy_reads_the_spread_and_the_kinds_order_on_the_story_indices(
    tmp_path: Path,
) -> None:
    """The discussion's observations from the story indices of the headline pool: the originals'
    spread against the shuffled versions' (SD over stories, paired) with a bootstrap interval,
    and mean ETC against mean EWC on a corpus read with both kinds."""
    rng = np.random.default_rng(3)
    original = rng.uniform(0.2, 0.9, 12)  # spread out
    shuffled = 0.55 + rng.uniform(-0.05, 0.05, 12)  # tightly clustered
    ewc = rng.uniform(0.1, 0.3, 12)
    sids = [f"s{i}" for i in range(12)]
    rows = [(s, "etc", "original", v) for s, v in zip(sids, original, strict=True)]
    rows += [(s, "etc", "shuffle", v) for s, v in zip(sids, shuffled, strict=True)]
    rows += [(s, "ewc", "original", v) for s, v in zip(sids, ewc, strict=True)]
    _story_indices(rows).to_parquet(tmp_path / "i.parquet")
    comparison = [_fei_row("pooled", "shuffle", 0.01, True)]
    ewc_row = {**_fei_row("pooled", "antonym_k1", 0.02, True), "kind": "ewc"}
    tables.FEI_COMPARISON.frame(pd.DataFrame([*comparison, ewc_row])).to_csv(
        tmp_path / "c.csv", index=False
    )
    files = {
        "published": [str(published.path_of("fabula_entropy_indexing"))],
        "hippocorpus_comparison": [str(tmp_path / "c.csv")],
        "hippocorpus_indices": [str(tmp_path / "i.parquet")],
    }
    settings = {"confidence": 0.95, "bootstrap": 999, "seed": 1}
    table = papers.compare("fabula_entropy_indexing", files, settings).set_index("id")
    spread = table.loc["D.spread.original-gt-corrupted"]
    expected = np.std(original, ddof=1) - np.std(shuffled, ddof=1)
    assert spread["ours"] == pytest.approx(expected)
    assert spread["ci_low"] < expected < spread["ci_high"] and spread["ci_low"] > 0
    assert spread["ours_direction"] == "original > corrupted"
    assert spread["direction_agrees"] == "yes"
    kinds = table.loc["D.original.etc-gt-ewc"]
    assert kinds["ours"] == pytest.approx(original.mean() - ewc.mean())
    assert kinds["ours_direction"] == "etc > ewc" and kinds["direction_agrees"] == "yes"
    # without EWC on the corpus the order is not computed, and says why
    _story_indices(rows[:24]).to_parquet(tmp_path / "i.parquet")
    tables.FEI_COMPARISON.frame(pd.DataFrame(comparison)).to_csv(tmp_path / "c.csv", index=False)
    table = papers.compare("fabula_entropy_indexing", files, settings).set_index("id")
    assert "both ETC and EWC" in table.loc["D.original.etc-gt-ewc", "verdict"]


def test_a_replication_row_in_words_names_the_table_its_line_and_both_values() -> None:
    row = {
        "source": "fiction_flows.txt l. 309 (Table A1)", "setting": "formulation=topic",
        "group": "imagined_vs_recalled", "published": 0.582, "paper_model": "mean",
        "quantity": "hedges_g", "published_direction": "", "ours": 0.52, "ci_low": 0.3,
        "ci_high": 0.7, "ours_direction": "+", "models": "gemma3-270m", "n": "9 per type",
        "validity": "failed: min_group_size", "verdict": "same direction, CI covers it",
    }  # fmt: skip
    assert agreement.sentence(row) == (
        "Table A1 (l. 309), formulation=topic, imagined_vs_recalled: published mean hedges_g "
        "0.582; ours 0.52 [0.3, 0.7] on gemma3-270m, n = 9 per type (failed: min_group_size): "
        "same direction, CI covers it"
    )
    line_only = {**row, "source": "narrative_sense_pmi.txt l. 560-563", "ours": math.nan}
    assert agreement.sentence(line_only).startswith("l. 560-563, formulation=topic")
    assert "ours +" in agreement.sentence(line_only)


def test_the_regression_finding_is_read_on_the_coherence_covariates_only(tmp_path: Path) -> None:
    """§5.4's "no coherence measure is associated (all p > .20)" holds with sentence difficulty
    controlled (Eq. 7/8: length, rare words, clauses, tree depth are controls): a significant
    control does not break it; a significant coherence covariate does, and is named."""
    covariates = {
        "lemma_overlap": 0.57, "embedding_sim": 0.31, "length_delta": 0.002, "n_tokens": 1e-60,
        "rare_word_rate": 0.01, "clause_count": 0.2, "tree_depth": 1e-20, "conn_causal": 0.7,
    }  # fmt: skip

    def coefficients(p_fdr: dict[str, float]) -> Path:
        fixed = {
            "kind": "gain", "formulation": "context", "role": "covariate", "scaling": "",
            "predictor_sd": 1.0, "estimate": -0.04, "se": 0.01, "df": 100.0, "t": -4.0,
            "ci_low": -0.06, "ci_high": -0.02, "n_obs": 300, "n_stories": 90,
        }  # fmt: skip
        rows = [
            {**fixed, "spec": f"gain_h{h}", "history": h, "term": c, "covariate": c, "label": c}
            | {"p": p, "p_fdr": p, "significant_fdr": p < 0.05}
            for h in (1, 3)
            for c, p in p_fdr.items()
        ]
        path = tmp_path / "coefficients.csv"
        tables.COEFFICIENTS.frame(pd.DataFrame(rows)).to_csv(path, index=False)
        return path

    files = {"published": [str(published.path_of("fiction_flows"))]}
    settings = {"confidence": 0.95, "bootstrap": 200, "seed": 1, "min_group_size": 5,
                "models": {}, "min_sentences": 2, "contrasts": {}}  # fmt: skip
    files["regression"] = [str(coefficients(covariates))]
    table = papers.compare("fiction_flows", files, settings).set_index("id")
    h1, h3 = table.loc["S5.4.gain.h1.others"], table.loc["S5.4.gain.h3.others"]
    assert h1["ours_direction"] == "p > 0.20" and h1["direction_agrees"] == "yes"
    assert h3["ours_direction"] == "p = 0.002 (length_delta)"  # at H3 it is not excepted
    assert table.loc["S5.4.gain.h1.length_delta", "direction_agrees"] == "yes"
    files["regression"] = [str(coefficients({**covariates, "embedding_sim": 1e-9}))]
    table = papers.compare("fiction_flows", files, settings).set_index("id")
    verdict = table.loc["S5.4.gain.h1.others", "verdict"]
    assert verdict == "does not hold (p = 1e-09 (embedding_sim))"


def test_the_figure_draws_what_the_run_computed_and_counts_the_rest_by_reason(
    tmp_path: Path,
) -> None:
    """A run with two small models computes a dozen of Fiction Flows' ~200 figures: those are
    drawn; the others are one line at the bottom, counted by reason, commonest first."""
    from storyflow.figures import replication as figure

    rows = published.read(published.path_of("fiction_flows")).head(5)
    names = {"value": "published", "direction": "published_direction", "model": "paper_model"}
    rows = rows.rename(columns=names).assign(paper="fiction_flows")
    ours = [0.4, math.nan, math.nan, math.nan, math.nan]
    notes = ["", "no GPT-3 175B base model in this run", "books is not scored in this run"]
    rows = rows.assign(
        ours=ours, ci_low=ours, ci_high=ours, ours_direction=["+", "", "", "", ""],
        note=notes + [notes[2]] * 2, validity="passed", direction_agrees="yes", ci_covers="yes",
    )  # fmt: skip
    line = figure._not_computed(rows[rows["ours"].isna()])
    assert line == (
        "Not computed in this run, 4 published figures (3: books is not scored in this run; "
        "1: no GPT-3 175B base model in this run)."
    )
    paths = [tmp_path / "f.png", tmp_path / "f.pdf"]
    figure.plot_replication(rows, paths, dpi=60)
    assert all(p.stat().st_size > 0 for p in paths)
    figure.plot_replication(rows[rows["ours"].isna()], [tmp_path / "none.png"], dpi=60)
    assert (tmp_path / "none.png").stat().st_size > 0
