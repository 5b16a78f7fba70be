"""The cross-measure comparison (storyflow.comparison): the story table, correlations between
measures (and given length), model agreement and group separation."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import sentences_table
from scipy import stats as sps

from storyflow import plan, stats, tables
from storyflow.comparison import correlation, separation, story_table
from storyflow.corpora.hanna import human_contrasts
from storyflow.errors import StoryflowError
from storyflow.plan.registry import verdict_rules

N = 40


def _stories(rng: np.random.Generator, n: int = N) -> tuple[pd.DataFrame, pd.DataFrame]:
    words = rng.integers(40, 400, n)
    stories = pd.DataFrame(
        {
            "story_id": [f"s{i:02d}" for i in range(n)],
            "story_type": np.repeat(["recalled", "imagined"], n // 2),
            "text": [" ".join(["word"] * int(k)) for k in words],
            "topic": None,
            "has_topic": False,
        }
    )
    counts = rng.integers(3, 9, n)
    sentences = pd.DataFrame(
        {
            "story_id": np.repeat(stories["story_id"], counts),
            "sentence_idx": np.concatenate([np.arange(c) for c in counts]),
            "text": "A sentence.",
        }
    )
    return stories, sentences


def _measure(ids, values, measure, model="", unit="nats/token") -> pd.DataFrame:
    return tables.STORY_MEASURES.frame(
        pd.DataFrame(
            {"story_id": ids, "model": model, "measure": measure, "value": values, "unit": unit}
        )
    )


@pytest.fixture
def corpus() -> tuple[pd.DataFrame, pd.DataFrame, list[pd.DataFrame]]:
    rng = np.random.default_rng(4)
    stories, sentences = _stories(rng)
    ids = stories["story_id"]
    length = stories["text"].str.split().str.len().to_numpy(float)
    measures = [
        _measure(ids, length + rng.normal(0, 60, N), "seq.context", "m1"),
        _measure(ids, length + rng.normal(0, 60, N), "seq.context", "m2"),
        # a measure of every story of a larger corpus (narrative sense scores all of them)
        _measure(
            [*ids, "other-1", "other-2"],
            np.r_[-0.01 * length + rng.normal(0, 1, N), 0.0, 0.0],
            "ns.pmi",
            unit="nats",
        ),
    ]
    return stories, sentences, measures


def test_story_table_has_one_row_per_story_and_model_and_every_measure(corpus) -> None:
    stories, sentences, measures = corpus
    table = story_table.story_table(stories, sentences, measures)
    assert len(table) == 2 * N and not table.duplicated(["story_id", "model"]).any()
    assert set(table["model"]) == {"m1", "m2"}
    assert story_table.measure_columns(table) == ["ns.pmi", "seq.context"]
    # each model's row carries that model's score, and the model-free score on both rows
    row = table.set_index(["story_id", "model"])
    for frame in measures:
        for r in frame.itertuples(index=False):
            if r.story_id.startswith("other"):
                assert r.story_id not in set(table["story_id"])
                continue
            models = [r.model] if r.model else ["m1", "m2"]
            for model in models:
                assert row.loc[(r.story_id, model), r.measure] == pytest.approx(r.value)
    first = row.loc[("s00", "m1")]
    assert first["n_words"] == len(stories.loc[0, "text"].split())
    assert first["n_sentences"] == (sentences["story_id"] == "s00").sum()
    units = story_table.measure_units(pd.concat(measures), stories)
    assert units.set_index("measure").loc["ns.pmi", "n_stories"] == N  # the corpus's stories
    assert units.set_index("measure").loc["seq.context", "models"] == "m1 m2"


def test_a_story_without_a_score_keeps_nan_and_clashing_names_stop(corpus) -> None:
    stories, sentences, measures = corpus
    partial = measures[2][measures[2]["story_id"] != "s03"]
    table = story_table.story_table(stories, sentences, [measures[0], partial])
    assert table.loc[table["story_id"] == "s03", "ns.pmi"].isna().all()
    assert table["ns.pmi"].notna().sum() == N - 1
    with pytest.raises(StoryflowError, match=r"'seq\.context' scores story 's00'"):
        story_table.story_table(stories, sentences, [measures[0], measures[0]])
    other_unit = measures[1].assign(unit="bits")
    with pytest.raises(StoryflowError, match="more than one unit"):
        story_table.measure_units(pd.concat([measures[0], other_unit]), stories)


def test_a_measure_correlates_one_with_itself_and_near_zero_with_a_shuffled_copy() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=400)
    assert correlation.spearman(x, x) == pytest.approx(1.0)
    shuffled = rng.permutation(x)
    rho = correlation.spearman(x, shuffled)
    assert abs(rho) < 0.15  # |rho| of independent samples: SD 1/sqrt(399) = 0.05
    assert rho == pytest.approx(sps.spearmanr(x, shuffled).statistic, abs=1e-12)


def test_partial_correlation_removes_a_common_cause() -> None:
    """x and y both follow z (length) and nothing else: rho is high, rho given z is near 0; and
    the formula equals the correlation of the rank residuals after regressing on z's ranks."""
    rng = np.random.default_rng(2)
    z = rng.normal(size=2000)
    x = z + rng.normal(scale=0.5, size=z.size)
    y = z + rng.normal(scale=0.5, size=z.size)
    assert correlation.spearman(x, y) > 0.7
    assert abs(correlation.partial_spearman(x, y, z)) < 0.06
    # against a direct computation: residuals of the ranks of x and y on the ranks of z
    small = slice(0, 60)
    rx, ry, rz = (sps.rankdata(v[small]) for v in (x, y, z))
    design = np.column_stack([np.ones_like(rz), rz])
    res_x = rx - design @ np.linalg.lstsq(design, rx, rcond=None)[0]
    res_y = ry - design @ np.linalg.lstsq(design, ry, rcond=None)[0]
    direct = np.corrcoef(res_x, res_y)[0, 1]
    assert correlation.partial_spearman(x[small], y[small], z[small]) == pytest.approx(direct)


def test_correlation_table_is_a_full_matrix_with_cis(corpus) -> None:
    stories, sentences, measures = corpus
    table = story_table.story_table(stories, sentences, measures)
    result = correlation.correlations(
        table, length="n_words", resamples=300, confidence=0.95, seed=3
    )
    m1 = result[result["model"] == "m1"].set_index(["measure_a", "measure_b"])
    assert len(m1) == 3 * 3  # n_words, ns.pmi, seq.context: every ordered pair
    assert m1.loc[("seq.context", "seq.context"), "rho"] == 1.0
    pair = m1.loc[("seq.context", "ns.pmi")]
    assert pair["rho"] == pytest.approx(m1.loc[("ns.pmi", "seq.context"), "rho"])
    assert pair["rho_low"] < pair["rho"] < pair["rho_high"] and pair["n"] == N
    # both follow length in opposite directions; given length, the link shrinks
    assert pair["rho"] < -0.5 and abs(pair["partial"]) < abs(pair["rho"])
    assert np.isnan(m1.loc[("n_words", "seq.context"), "partial"])
    again = correlation.correlations(
        table, length="n_words", resamples=300, confidence=0.95, seed=3
    )
    pd.testing.assert_frame_equal(result, again)  # seeded bootstrap


def test_the_correlation_table_is_the_same_in_every_process(corpus, tmp_path) -> None:
    """Its rows came in a set's order, which Python's string hashing changes from one process
    to the next: two runs of the workflow wrote the same rows in another order."""
    stories, sentences, measures = corpus
    story_table.story_table(stories, sentences, measures).to_parquet(tmp_path / "t.parquet")
    code = (
        "import sys, pandas as pd; from storyflow.comparison import correlation; "
        "correlation.correlations(pd.read_parquet(sys.argv[1]), length='n_words', "
        "resamples=10, confidence=0.95, seed=3).to_csv(sys.argv[2], index=False)"
    )
    seeds = [str(s) for s in range(6)]  # two orders of a pair: the same in 6 by chance 1/32
    for hash_seed in seeds:
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "t.parquet"), str(tmp_path / hash_seed)],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            check=True,
        )
    assert len({(tmp_path / s).read_bytes() for s in seeds}) == 1


def test_too_few_stories_give_nan_not_a_number_from_nothing(corpus) -> None:
    stories, sentences, measures = corpus
    table = story_table.story_table(stories.head(4), sentences, measures)
    result = correlation.correlations(
        table, length="n_words", resamples=50, confidence=0.95, seed=0
    )
    off = result[result["measure_a"] != result["measure_b"]]
    assert off["rho"].isna().all() and (off["n"] == 4).all()


def test_model_agreement_ranks_the_same_stories_alike(corpus) -> None:
    _, _, measures = corpus
    result = correlation.model_agreement(
        pd.concat(measures), resamples=200, confidence=0.95, seed=0
    )
    assert result[["measure", "model_a", "model_b"]].values.tolist() == [
        ["seq.context", "m1", "m2"]
    ]
    assert result.loc[0, "rho"] > 0.6 and result.loc[0, "n"] == N


def test_separation_gives_hedges_g_per_contrast_model_and_measure(corpus) -> None:
    stories, sentences, measures = corpus
    table = story_table.story_table(stories, sentences, measures)
    contrasts = [{"name": "imagined_vs_recalled", "a": "imagined", "b": "recalled"}]
    result = separation.separation(
        table, contrasts, model_free=["ns.pmi"], confidence=0.95, min_group_size=2
    )
    assert sorted(zip(result["model"], result["measure"], strict=True)) == [
        ("", "ns.pmi"),
        ("m1", "seq.context"),
        ("m2", "seq.context"),
    ]
    row = result[result["model"] == "m1"].iloc[0]
    members = stories.set_index("story_id")["story_type"]
    m1 = measures[0].set_index("story_id")["value"]
    g = stats.hedges_g(m1[members == "imagined"], m1[members == "recalled"], 0.95)
    assert (row["g"], row["g_low"], row["g_high"]) == pytest.approx(g)
    assert (row["n_a"], row["n_b"]) == (N // 2, N // 2)


def test_hanna_contrasts_pair_the_human_story_with_each_llm_and_all() -> None:
    found = human_contrasts(["Human", "GPT-2", "Llama-7b"])
    assert [c["name"] for c in found] == ["human_vs_GPT-2", "human_vs_Llama-7b", "human_vs_llms"]
    assert found[-1]["b"] == {"story_type": ["GPT-2", "Llama-7b"]}
    assert human_contrasts(["GPT-2"]) == []
    assert separation.corpus_contrasts("hanna", [], ["Human", "GPT-2"])[0]["b"] == "GPT-2"
    declared = [{"name": "x", "a": "imagined", "b": "recalled"}]
    assert separation.corpus_contrasts("hippocorpus", declared, ["imagined"]) == declared


def _config(**measures) -> dict:
    base = {
        "hippocorpus": {},
        "books": {"enabled": False},
        "corpora": {},
        "narrative_sense": {"enabled": False, "targets": ["hippocorpus", "hanna"]},
        "plot_holes": {"enabled": False},
        "tension": {"enabled": False},
        "fabula_entropy": {"enabled": False},
        "comparison": {"enabled": True, "corpora": None},
    }
    for key, value in measures.items():
        base[key] = base.get(key, {}) | value
    return base


def test_compared_corpora_are_those_two_measures_score() -> None:
    assert plan.comparison.corpora(_config()) == []  # sequentiality alone
    config = _config(narrative_sense={"enabled": True})
    assert plan.comparison.corpora(config) == ["hippocorpus"]
    files = plan.comparison.story_measure_files(config)
    assert files["hanna"] == ["results/hanna/narrative_sense/story_measures.parquet"]
    config["comparison"]["corpora"] = ["hanna"]
    with pytest.raises(StoryflowError, match="'hanna', which only narrative_sense scores"):
        plan.comparison.corpora(config)
    assert plan.comparison.corpora(_config(comparison={"enabled": False})) == []


# --- the whole workflow: every measure on the same tiny stories ----------------------------


@pytest.mark.slow
def test_story_table_of_a_run_holds_every_measure_of_every_story(measures_run) -> None:
    corpus = measures_run / "results" / "hippocorpus"
    results = corpus / "comparison"
    stories = tables.read(tables.STORIES, corpus / "corpus" / "stories.parquet")
    table = tables.read(tables.STORY_TABLE, results / "measures.parquet")
    handed = {
        measure: tables.read(tables.STORY_MEASURES, corpus / measure / "story_measures.parquet")
        for measure in ("sequentiality", "tension", "fabula_entropy", "plot_holes")
    }
    models = sorted({m for frame in handed.values() for m in frame["model"]} - {""})
    # one row per story and model, every story of the sample, no other
    assert len(table) == len(stories) * len(models)
    assert set(table["story_id"]) == set(stories["story_id"])
    assert not table.duplicated(["story_id", "model"]).any()
    # every measure's every score, in its column, on its story's row
    columns = story_table.measure_columns(table)
    indexed = table.set_index(["story_id", "model"])
    for measure, frame in handed.items():
        names = set(frame["measure"])
        assert names and names <= set(columns), f"{measure}: {names - set(columns)} missing"
        for row in frame.itertuples(index=False):
            for model in [row.model] if row.model else models:
                cell = indexed.loc[(row.story_id, model), row.measure]
                assert cell == pytest.approx(row.value, nan_ok=True)
    units = tables.read(tables.MEASURE_UNITS, results / "tables" / "measure_units.csv")
    assert set(units["measure"]) == set(columns) and units["unit"].notna().all()
    correlations = tables.read(
        tables.MEASURE_CORRELATIONS, results / "tables" / "measure_correlations.csv"
    )
    diagonal = correlations[correlations["measure_a"] == correlations["measure_b"]]
    assert (diagonal["rho"] == 1).all()
    separation_table = tables.read(
        tables.MEASURE_SEPARATION, results / "tables" / "measure_separation.csv"
    )
    assert set(separation_table["contrast"]) == {"imagined_vs_recalled", "retold_vs_recalled"}
    for figure in ("measure_correlations", "measure_separation"):
        assert (results / "figures" / f"{figure}.png").stat().st_size > 10_000


# --- validity verdicts in the comparison (issue 24) -----------------------------------------


def _validity(rows) -> pd.DataFrame:
    """VALIDITY rows from (measure, corpus, role, model, check, passed)."""
    return tables.VALIDITY.frame(
        tables.VALIDITY.row(
            measure=m, corpus=c, role=r, model=mod, check=chk, value=0.5, ci_low=0.4,
            ci_high=0.6, threshold=0.6, rule="value >= threshold", n=50, passed=ok,
            detail="test",
        )
        for m, c, r, mod, chk, ok in rows
    )  # fmt: skip


VALIDITY_ROWS = [
    ("tension", "rocstories", "forecaster", "fc", "pairwise_accuracy", True),
    ("tension", "rocstories", "judge", "embedding", "balanced_accuracy[fc]", False),
    ("tension", "rocstories", "judge", "jm", "balanced_accuracy[fc]", True),
    ("fabula_entropy", "hippocorpus", "reader", "qwen/standard", "control_auc", True),
    ("fabula_entropy", "hippocorpus", "reader", "qwen/standard", "balanced_accuracy", True),
    ("fabula_entropy", "hippocorpus", "reader", "small/standard", "balanced_accuracy", False),
    ("fabula_entropy", "rocstories", "reader", "qwen/standard", "balanced_accuracy", False),
    ("plot_holes", "hippocorpus", "detector", "det", "auroc", False),
    ("plot_holes", "hippocorpus", "surprisal", "det", "auroc", True),
]


@pytest.mark.parametrize(
    ("corpus_name", "measure", "model", "expected", "names"),
    [
        ("hanna", "tension.no_rate.embedding", "fc", "failed", "judge embedding"),
        ("hanna", "tension.no_rate.jm", "fc", "valid", ""),
        ("hanna", "tension.no_rate.jm", "other", "failed", "forecaster other not checked"),
        ("hanna", "tension.pmi", "fc", "not checked", ""),
        ("hippocorpus", "fabula_entropy.etc_soft", "qwen/standard", "valid", ""),
        ("hippocorpus", "fabula_entropy.etc_soft", "qwen", "valid", ""),
        ("rocstories", "fabula_entropy.etc_soft", "qwen/standard", "failed", "reader qwen"),
        ("hippocorpus", "fabula_entropy.etc_soft", "small/standard", "failed", "small/standard"),
        ("hippocorpus", "fabula_entropy.etc_hard", "pooled", "valid", ""),
        ("hippocorpus", "fabula_entropy.etc_hard", "human", "not checked", ""),
        ("hanna", "plot_holes.p_error", "det", "failed", "det auroc"),
        ("hanna", "plot_holes.surprisal_f_minus_d", "det", "valid", ""),
        ("hanna", "plot_holes.p_error", "unchecked", "not checked", ""),
        ("hippocorpus", "sequentiality.context", "m1", "not checked", ""),
        ("hippocorpus", "narrative_sense.pmi", "", "not checked", ""),
    ],
)
def test_each_story_measure_gets_the_verdict_of_the_models_it_rests_on(
    corpus_name, measure, model, expected, names
) -> None:
    from storyflow.comparison import verdicts

    validity = _validity(VALIDITY_ROWS)
    verdict, failed = verdicts.verdict(validity, corpus_name, measure, model, verdict_rules())
    assert verdict == expected
    assert names in failed and (failed == "") == (expected != "failed")


def test_failed_measures_reach_the_story_table_and_every_comparison_table(corpus) -> None:
    from storyflow.comparison import verdicts

    stories, sentences, measures = corpus
    ids = stories["story_id"]
    rng = np.random.default_rng(9)
    measures = [*measures, _measure(ids, rng.random(N), "plot_holes.p_error", "m1", "share")]
    scores = pd.concat(measures, ignore_index=True)
    validity = _validity([("plot_holes", "hippocorpus", "detector", "m1", "auroc", False)])
    judged = verdicts.measure_verdicts(scores, validity, "hippocorpus", verdict_rules())
    by_pair = judged.set_index(["measure", "model"])["verdict"]
    assert by_pair[("plot_holes.p_error", "m1")] == "failed"
    assert by_pair[("seq.context", "m1")] == "not checked"

    table = story_table.story_table(stories, sentences, measures, judged)
    assert set(table.loc[table["model"] == "m1", "failed_measures"]) == {"plot_holes.p_error"}
    assert set(table.loc[table["model"] == "m2", "failed_measures"]) == {""}
    assert "failed_measures" not in story_table.measure_columns(table)

    rho = correlation.correlations(
        table, length="n_words", resamples=50, confidence=0.95, seed=1, verdicts=judged
    )
    with_p = (rho["measure_a"] == "plot_holes.p_error") | (rho["measure_b"] == "plot_holes.p_error")
    assert not rho.loc[with_p, "valid"].any()
    assert set(rho.loc[with_p, "failed"]) == {"plot_holes.p_error@m1"}
    assert rho.loc[~with_p, "valid"].all()

    contrast = [{"name": "type", "a": {"story_type": "imagined"}, "b": {"story_type": "recalled"}}]
    g = separation.separation(
        table, contrast, model_free=["ns.pmi"], confidence=0.95, min_group_size=2, verdicts=judged
    )
    assert list(g.loc[~g["valid"], "measure"]) == ["plot_holes.p_error"]
    assert g["tested"].all()


def test_a_contrast_below_the_minimum_group_size_is_reported_but_not_tested(corpus) -> None:
    stories, sentences, measures = corpus
    table = story_table.story_table(stories, sentences, measures)
    contrast = [{"name": "type", "a": {"story_type": "imagined"}, "b": {"story_type": "recalled"}}]
    few = table[table["story_id"].isin(table["story_id"].unique()[N // 2 - 4 : N // 2 + 3])]
    g = separation.separation(
        few, contrast, model_free=["ns.pmi"], confidence=0.95, min_group_size=5
    )
    assert set(g["n_a"].tolist() + g["n_b"].tolist()) == {3, 4}
    assert not g["tested"].any() and g["g"].isna().all()
    assert g["mean_a"].notna().all()  # the sizes and means are kept
    g = separation.separation(
        few, contrast, model_free=["ns.pmi"], confidence=0.95, min_group_size=3
    )
    assert g["tested"].all() and g["g"].notna().all()


def test_the_separation_figure_draws_a_failed_measure_hollow_and_names_it(corpus, tmp_path) -> None:
    from storyflow.comparison import verdicts
    from storyflow.figures import comparison as figures

    stories, sentences, measures = corpus
    ids = stories["story_id"]
    measures = [*measures, _measure(ids, np.arange(N, dtype=float), "plot_holes.p_error", "m1")]
    validity = _validity([("plot_holes", "hippocorpus", "detector", "m1", "auroc", False)])
    judged = verdicts.measure_verdicts(
        pd.concat(measures), validity, "hippocorpus", verdict_rules()
    )
    table = story_table.story_table(stories, sentences, measures, judged)
    contrast = [{"name": "type", "a": {"story_type": "imagined"}, "b": {"story_type": "recalled"}}]
    g = separation.separation(
        table, contrast, model_free=["ns.pmi"], confidence=0.95, min_group_size=2, verdicts=judged
    )
    drawn = {}
    original = figures.save
    figures.save = lambda fig, paths, dpi: drawn.setdefault("fig", fig)
    try:
        figures.plot_separation(g, [tmp_path / "g.png"], dpi=60)
    finally:
        figures.save = original
    labels = [t.get_text() for legend in drawn["fig"].legends for t in legend.get_texts()]
    assert "m1 (failed its validity check)" in labels and "m1" in labels
    hollow = [
        line
        for ax in drawn["fig"].axes
        for line in ax.get_lines()
        if line.get_markerfacecolor() == "none"
    ]
    assert len(hollow) == 1 and len(hollow[0].get_xdata()) == 1


# --- the plot-hole columns of the default config (issue 51, item 3) ----------------------------


def _plot_hole_versions() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The controlled maker's versions of story p1 (original O, flawed F, consistent change C,
    flawed without the establishing sentence D; the changed sentence is the last) and a
    surprisal model's sentence NLLs of each, the changed sentence's chosen per version."""
    text = ["My car was red.", "I drove it to work.", "It rained all day.", "The red car shone."]
    versions = {
        "O": (text, 3, 2.0),
        "F": ([*text[:3], "The blue car shone."], 3, 5.5),
        "C": (["My car was blue.", *text[1:3], "The blue car shone."], 3, 2.5),
        "D": ([*text[1:3], "The blue car shone."], 2, 4.25),
    }
    made = tables.PLOT_HOLE_STORIES.frame(
        tables.PLOT_HOLE_STORIES.row(
            story_id="p1", item_id=f"p1:controlled:{v}", maker="controlled", version=v,
            has_error=v in ("F", "D"), n_sentences=len(sents), sentences=sents,
            error_lines=[target + 1] if v in ("F", "D") else [],
            contr_lines=[1] if v == "F" else [], target_idx=target, attribute_class="color",
            proposition="red (sentence 1)", original=" ".join(text), verification="exact",
            provenance="{}",
        )
        for v, (sents, target, _) in versions.items()
    )  # fmt: skip
    nll = tables.PLOT_HOLE_SURPRISAL.frame(
        tables.PLOT_HOLE_SURPRISAL.row(
            item_id=f"p1:controlled:{v}", story_id="p1", version=v, model=model, sentence_idx=i,
            n_tokens=5, nll=changed if i == target else 3.0 + i / 10,
        )
        for model in ("m0",)
        for v, (sents, target, changed) in versions.items()
        for i in range(len(sents))
    )  # fmt: skip
    return made, nll


def test_the_default_config_gives_the_story_table_a_plot_hole_column_with_values(
    default_config, tmp_path
) -> None:
    """The default config has the surprisal baseline and no detector model: the plot-hole story
    measures must still reach the story table (the surprisal baseline's F - D per story), not
    be left empty because no detector ran."""
    from storyflow.measures.plot_holes.scoring import score_corpus

    detectors = plan.plot_holes.detectors(default_config)
    surprisal_models = plan.plot_holes.surprisal_models(default_config)
    assert detectors == [] and surprisal_models, "the default config's plot-hole roles changed"
    made, nll = _plot_hole_versions()
    nll = nll.assign(model=surprisal_models[0])
    made.to_parquet(tmp_path / "made.parquet", index=False)
    nll.to_parquet(tmp_path / "nll.parquet", index=False)
    stories = pd.DataFrame(
        {"story_id": ["p1", "p2"], "story_type": ["recalled", "imagined"],
         "text": [" ".join(made.loc[0, "sentences"]), "A short one. It ends."],
         "topic": None, "has_topic": False}
    )  # fmt: skip
    sentences = sentences_table({"p1": list(made.loc[0, "sentences"]), "p2": ["A.", "B."]})
    scored = score_corpus(
        made_paths=[str(tmp_path / "made.parquet")], answer_paths=[],
        surprisal_paths=[str(tmp_path / "nll.parquet")], validity_path=None, verdicts_path=None,
        min_annotators=1, stories=stories, corpus="hippocorpus",
        settings=plan.plot_holes.settings(default_config)["scoring"], detectors=detectors,
        surprisal_models=surprisal_models,
    )  # fmt: skip
    table = story_table.story_table(stories, sentences, [scored.story_measures])
    assert story_table.measure_columns(table) == ["plot_holes.surprisal_f_minus_d"]
    by_story = table.set_index("story_id")["plot_holes.surprisal_f_minus_d"]
    assert by_story["p1"] == pytest.approx(5.5 - 4.25)  # F minus D at the changed sentence
    assert np.isnan(by_story["p2"])  # the maker made no versions of it
    assert set(table["model"]) == set(surprisal_models)
