"""End to end: the Snakefile on the tiny config (2 stories per type, SmolLM2, H = 2).

The checks read the outputs' content: counts of rows implied by the sample, that every sentence
and history size is scored, that sequentiality equals the difference of the NLL terms, that the
effect sizes follow from the story table, and that the figures are real images. Bad inputs that
only show up at workflow level (a missing model file, an absent corpus offline) give one clear
message and no traceback.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO

from storyflow.history import history_labels

MODEL = "smollm2-135m-instruct"
pytestmark = pytest.mark.slow  # runs the whole workflow (tiny config)


@pytest.fixture(scope="module")
def outputs(tiny_run: Path) -> dict[str, pd.DataFrame]:
    corpus = tiny_run / "results" / "hippocorpus" / "corpus"
    results = tiny_run / "results" / "hippocorpus" / "sequentiality"
    read = {"dtype": {"history": str, "story_id": str}}
    return {
        "stories": pd.read_parquet(corpus / "stories.parquet"),
        "sentences": pd.read_parquet(corpus / "sentences.parquet"),
        "nll": pd.read_parquet(results / "nll" / f"{MODEL}.parquet"),
        "seq_stories": pd.read_parquet(results / "scores" / MODEL / "stories.parquet"),
        "counts": pd.read_csv(corpus / "tables" / "sample_counts.csv"),
        "summary": pd.read_csv(results / "tables" / "sequentiality_by_type.csv", **read),
        "effects": pd.read_csv(results / "tables" / "effect_sizes.csv", **read),
    }


def test_sample_is_stratified_and_counted(outputs: dict[str, pd.DataFrame]) -> None:
    stories = outputs["stories"]
    assert stories.groupby("story_type").size().to_dict() == {
        "imagined": 2,
        "recalled": 2,
        "retold": 2,
    }
    counts = outputs["counts"].set_index("story_type")
    assert counts.loc["total", "n_in_corpus"] == 6854
    assert counts.loc["total", "n_sampled"] == 6
    assert counts.loc["recalled", "n_in_corpus"] == 2779


def test_every_sentence_history_and_formulation_is_scored(
    outputs: dict[str, pd.DataFrame],
) -> None:
    nll, sentences, stories = outputs["nll"], outputs["sentences"], outputs["stories"]
    labels = history_labels(2)
    with_topic = set(stories.loc[stories["has_topic"], "story_id"])
    n_topic = int(sentences["story_id"].isin(with_topic).sum())
    assert len(nll) == len(labels) * (len(sentences) + n_topic)
    assert set(nll["history"]) == set(labels)
    assert (nll["n_tokens"] > 0).all() and np.isfinite(nll["nll"]).all()
    assert not nll["truncated"].any()
    # n_history is h, capped by the number of preceding sentences; full history sees them all
    finite = nll[nll["history"] != "full"]
    assert (
        finite["n_history"] == np.minimum(finite["history"].astype(int), finite["sentence_idx"])
    ).all()
    full = nll[nll["history"] == "full"]
    assert (full["n_history"] == full["sentence_idx"]).all()
    # real text: on average, context makes a sentence more predictable than no context
    mean = nll.groupby(["formulation", "history"])["nll"].mean()
    assert mean[("context", "full")] < mean[("context", "0")]
    assert mean[("topic", "full")] < mean[("topic", "0")]
    # the topic alone already helps compared with nothing at all
    assert mean[("topic", "0")] < mean[("context", "0")]


def test_story_sequentiality_is_the_mean_difference_of_nll_terms(
    outputs: dict[str, pd.DataFrame],
) -> None:
    nll = outputs["nll"].set_index(["story_id", "formulation", "history", "sentence_idx"])["nll"]
    seq = outputs["seq_stories"]
    for row in seq.sample(8, random_state=0).itertuples():
        base = nll.loc[(row.story_id, row.formulation, "0")]
        context = nll.loc[(row.story_id, row.formulation, row.history)]
        assert row.seq == pytest.approx(float((base - context).mean()), abs=1e-12)
        assert row.nll_base == pytest.approx(float(base.mean()), abs=1e-12)


def test_effect_sizes_follow_from_the_story_table(outputs: dict[str, pd.DataFrame]) -> None:
    seq, effects = outputs["seq_stories"], outputs["effects"]
    assert set(effects["contrast"]) == {"imagined_vs_recalled", "retold_vs_recalled"}
    assert len(effects) == 2 * 3 * 2 * 3  # formulations x histories x contrasts x measures
    row = effects.query(
        "formulation == 'context' and history == 'full' and contrast == 'imagined_vs_recalled'"
        " and measure == 'seq'"
    ).iloc[0]
    pick = seq[(seq["formulation"] == "context") & (seq["history"] == "full")]
    a = pick.loc[pick["story_type"] == "imagined", "seq"].to_numpy()
    b = pick.loc[pick["story_type"] == "recalled", "seq"].to_numpy()
    # Hedges' g written out independently: pooled SD with n - 1 weights, J = 1 - 3 / (4 N - 9)
    pooled = np.sqrt(
        ((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / (len(a) + len(b) - 2)
    )
    g = (1 - 3 / (4 * (len(a) + len(b)) - 9)) * (a.mean() - b.mean()) / pooled
    assert (row["n_a"], row["n_b"]) == (2, 2)
    assert row["g"] == pytest.approx(g, rel=1e-9)
    assert row["g_ci_low"] < row["g"] < row["g_ci_high"]


def test_summary_table_and_figures(tiny_run: Path, outputs: dict[str, pd.DataFrame]) -> None:
    summary = outputs["summary"]
    seq_rows = summary[summary["measure"] == "seq"]
    assert set(seq_rows["history"]) == {"1", "2", "full"}
    assert (seq_rows["n"] == 2).all()
    assert (seq_rows["ci_low"] <= seq_rows["mean"]).all()
    figures = tiny_run / "results" / "hippocorpus" / "sequentiality" / "figures"
    for name in ("sequentiality_by_history", "effect_sizes"):
        png = (figures / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
        assert (figures / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"


def test_every_rule_logged(tiny_run: Path) -> None:
    logs = list((tiny_run / "logs").rglob("*.log"))
    names = {p.name for p in logs}
    assert {"sample_stories.log", "split_sentences.log", "compute_effect_sizes.log"} <= names
    assert any("forward passes" in p.read_text() for p in logs if "score_nll" in str(p))


def _failing_run(snakemake, tmp_path: Path, config: dict, target: str) -> str:
    """Run ``target`` with ``config`` on top of the tiny config (``--config`` last); must fail."""
    command = snakemake.command(tmp_path / "run", "--cores", "1", targets=[target])
    at = command.index("--config")
    command[at + 1 : at + 2] = [f"{key}={json.dumps(value)}" for key, value in config.items()]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode != 0
    return result.stdout + result.stderr


def test_missing_model_file_gives_one_clear_message(snakemake, tmp_path: Path) -> None:
    model = {"name": "absent", "source": {"path": str(tmp_path / "nowhere" / "model.gguf")}}
    out = _failing_run(snakemake, tmp_path, {"models": [model]}, "resources/models/absent.gguf")
    # named at planning, before any job (docs/cost_and_failures.md, "Mistakes named before
    # they cost")
    assert "model 'absent': source.path: no such file" in out and "nowhere/model.gguf" in out
    assert "GGUF file" in out and "Traceback" not in out


def _run_without_mirror(snakemake, tmp_path: Path, change: Path, target: str) -> str:
    """Run ``target`` with the config file ``change`` and no data mirror; it must fail."""
    command = snakemake.command(
        tmp_path / "run", "--cores", "1", configfiles=[change], targets=[target]
    )
    at = command.index("--config")
    del command[at : at + 2]  # no --config data={mirror: ...}: the config files decide
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode != 0
    return result.stdout + result.stderr


def test_absent_corpus_offline_says_what_to_download(snakemake, tmp_path: Path) -> None:
    # no mirror: the download rule fetches the official release, and offline says what to do
    change = tmp_path / "download.yaml"
    change.write_text(
        json.dumps({"data": {"mirror": None}, "hippocorpus": {"url": "http://127.0.0.1:9/hc.zip"}})
    )
    out = _run_without_mirror(
        snakemake, tmp_path, change, "results/hippocorpus/corpus/stories.parquet"
    )
    assert "hippoCorpusV2.csv" in out and "data.mirror" in out and "127.0.0.1:9" in out
    assert "Traceback" not in out


BOOKS_TINY = {
    "books": {
        "enabled": True,
        "sample": {
            "per_genre": {"fiction": 2, "autobiography": 1, "biography": 1, "nonnarrative": 1},
            "seed": 2022,
        },
        "passages": {"per_book": 2, "sentences": 5},
    },
    "nll": {"shards": 2},
}
BOOK_TARGETS = [
    "results/books/sequentiality/tables/contrast_summary.csv",
    "results/books/corpus/tables/point_of_view.csv",
    "results/books/sequentiality/figures/sequentiality_by_contrast.png",
    "results/books/sequentiality/figures/sequentiality_by_history.png",
]


def test_book_genres_share_the_sequentiality_and_statistics_path(snakemake, tmp_path: Path) -> None:
    """Five sampled books, two 5-sentence passages each, through NLL, stats and figures."""
    change = tmp_path / "books.yaml"
    change.write_text(json.dumps(BOOKS_TINY))  # JSON is YAML
    workdir = tmp_path / "run"
    snakemake(workdir, "--cores", "2", configfiles=[change], targets=BOOK_TARGETS)
    corpus = workdir / "results" / "books" / "corpus"
    results = workdir / "results" / "books" / "sequentiality"
    stories = pd.read_parquet(corpus / "stories.parquet")
    sentences = pd.read_parquet(corpus / "sentences.parquet")
    assert stories.groupby("genre")["document_id"].nunique().to_dict() == {
        "autobiography": 1,
        "biography": 1,
        "fiction": 2,
        "nonnarrative": 1,
    }
    assert len(stories) == 10 and sentences.groupby("story_id").size().eq(5).all()
    fiction = stories[stories["genre"] == "fiction"]
    assert (fiction["story_type"] == "fiction-" + fiction["pov"]).all()
    assert (stories.loc[stories["genre"] != "fiction", "story_type"] != "fiction").all()
    nll = pd.read_parquet(results / "nll" / f"{MODEL}.parquet")
    assert set(nll["formulation"]) == {"context"}  # books have no topic
    assert set(nll["story_id"]) == set(stories["story_id"])

    effects = pd.read_csv(results / "tables" / "effect_sizes.csv", dtype={"history": str})
    assert len(effects) == 4 * 3 * 3  # default contrasts x histories x measures
    row = effects.query("contrast == 'fic3p_vs_biography' and history == '2' and measure == 'seq'")
    seq = pd.read_parquet(results / "scores" / MODEL / "stories.parquet")
    seq = seq[seq["history"] == "2"].merge(stories[["story_id", "genre", "pov"]], on="story_id")
    a = seq.loc[(seq["genre"] == "fiction") & (seq["pov"] == "3P"), "seq"]
    b = seq.loc[seq["genre"] == "biography", "seq"]
    assert (row["n_a"].iloc[0], row["n_b"].iloc[0], row["n_docs_b"].iloc[0]) == (len(a), 2, 1)
    if len(a):
        assert row["mean_a"].iloc[0] == pytest.approx(a.mean())
    assert row["mean_b"].iloc[0] == pytest.approx(b.mean())
    summary = pd.read_csv(results / "tables" / "contrast_summary.csv")
    assert {"cell_mean_g", "n_docs_a", "n_docs_b"} <= set(summary.columns)
    pov = pd.read_csv(corpus / "tables" / "point_of_view.csv")
    assert list(pov["story_id"]) == list(stories["story_id"])
    png = (results / "figures" / "sequentiality_by_contrast.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_books_absent_offline_are_named_in_one_message(snakemake, tmp_path: Path) -> None:
    # no mirror: books missing locally are downloaded; offline, one message names them all
    manifest = tmp_path / "MANIFEST.tsv"
    manifest.write_text("category\tgutenberg_id\ttitle\npoetry\t1\tA\ndrama\t2\tB\n")
    change = tmp_path / "books.yaml"
    change.write_text(
        json.dumps(
            {
                "data": {"mirror": None},
                "books": {
                    "enabled": True,
                    "manifest": str(manifest),
                    "url": "http://127.0.0.1:9/{id}.txt",
                    # two groups of other books: a contrast of one group with itself is
                    # refused at planning, before the books are looked for
                    "contrasts": [{"name": "x", "a": "poetry", "b": "drama"}],
                },
            }
        )
    )
    out = _run_without_mirror(snakemake, tmp_path, change, "results/books/corpus/stories.parquet")
    assert "2 book(s) are neither in the data mirror nor downloadable" in out
    for genre, book in (("poetry", "1"), ("drama", "2")):
        assert f"put it at resources/data/books/{genre}/{book}.txt" in out
    assert "Traceback" not in out
