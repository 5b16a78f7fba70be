"""The tables a researcher opens, also as CSV (scripts/export_csv.py): the story table of the
comparison and each model's sentence and story sequentiality; each CSV holds the Parquet's rows
and columns, and its report caption gives the unit of every column."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pandas.testing as pdt
import pytest
from conftest import REPO, run_script

from storyflow import plan, tables
from storyflow.measures.sequentiality.scores import SEQUENTIALITY_UNIT
from storyflow.measures.tension.compare import UNITS as TENSION_UNITS

REPORT = REPO / "workflow" / "report"
#: Each exported table, its caption and the rules file that exports it.
EXPORTS = {
    "story_table.rst": tables.STORY_TABLE,
    "sequentiality_sentence_scores.rst": tables.SENTENCE_SEQUENTIALITY,
    "sequentiality_story_scores.rst": tables.STORY_SEQUENTIALITY,
}


def sentences() -> pd.DataFrame:
    return tables.SENTENCE_SEQUENTIALITY.frame(
        tables.SENTENCE_SEQUENTIALITY.row(
            story_id=story_id, sentence_idx=i, model="m", formulation=formulation,
            history=history, n_history=n_history, truncated=truncated, nll_base=base,
            nll_context=context, seq=base - context,
        )
        for story_id, i, formulation, history, n_history, truncated, base, context in (
            ("s1", 0, "topic", "1", 0, False, 2.5, 2.5),
            ("s1", 1, "topic", "full", 1, True, 3.25, 1.0 / 3.0),
            ("007", 0, "context", "1", 0, False, float("nan"), 1.5),
        )
    )  # fmt: skip


def stories() -> pd.DataFrame:
    return tables.STORY_SEQUENTIALITY.frame(
        [
            tables.STORY_SEQUENTIALITY.row(
                story_id="s1", story_type="imagined", model="m", formulation="topic",
                history="full", n_sentences=2, seq=1.4583333333333333, nll_base=2.875,
                nll_context=1.4166, any_truncated=True,
            )
        ]
    )  # fmt: skip


def test_the_csv_holds_the_parquets_rows_and_columns(tmp_path: Path) -> None:
    """Labels stay text ("007"), floats read back equal to the last bit, NaN stays missing."""
    inputs = {"sentences": tmp_path / "sentences.parquet", "stories": tmp_path / "stories.parquet"}
    sentences().to_parquet(inputs["sentences"], index=False)
    stories().to_parquet(inputs["stories"], index=False)
    outputs = {name: tmp_path / "tables" / f"{name}.csv" for name in inputs}
    outputs["sentences"].parent.mkdir()
    run_script(
        "export_csv",
        input=inputs,
        output=outputs,
        params=SimpleNamespace(
            tables={"sentences": "SENTENCE_SEQUENTIALITY", "stories": "STORY_SEQUENTIALITY"}
        ),
    )
    back = tables.read(tables.SENTENCE_SEQUENTIALITY, outputs["sentences"])
    pdt.assert_frame_equal(back, sentences(), check_dtype=False)
    assert back["story_id"].tolist() == ["s1", "s1", "007"]
    assert back["history"].tolist() == ["1", "full", "1"]
    assert back["truncated"].tolist() == [False, True, False]
    header = outputs["sentences"].read_text().splitlines()[0]
    assert header.split(",") == tables.SENTENCE_SEQUENTIALITY.names
    pdt.assert_frame_equal(
        tables.read(tables.STORY_SEQUENTIALITY, outputs["stories"]), stories(), check_dtype=False
    )


def test_a_parquet_that_lacks_a_column_is_not_exported(tmp_path: Path) -> None:
    source = tmp_path / "stories.parquet"
    stories().drop(columns="seq").to_parquet(source, index=False)
    with pytest.raises(tables.TableError, match="lacks column"):
        tables.parquet_to_csv(tables.STORY_SEQUENTIALITY, source, tmp_path / "stories.csv")
    assert not (tmp_path / "stories.csv").exists()


@pytest.mark.parametrize("caption", list(EXPORTS))
def test_the_caption_names_every_column(caption: str) -> None:
    text = (REPORT / caption).read_text()
    named = set(re.findall(r"``([a-z_]+)``", text))
    missing = [c for c in EXPORTS[caption].names if c not in named]
    assert not missing, f"{caption} does not describe {missing}"


def test_the_story_table_caption_gives_every_measures_unit() -> None:
    """The units the measures give their story scores (the story table's measure columns)."""
    text = " ".join((REPORT / "story_table.rst").read_text().split())
    units = {SEQUENTIALITY_UNIT, *TENSION_UNITS.values(), "bits", "nats (PMI without ln N)"}
    for unit in units:
        assert f"**{unit}**" in text, unit
    for prefix in (m.name for m in plan.registry.MEASURES):
        assert f"``{prefix}." in text, prefix


def test_every_export_is_a_final_output_in_tables(default_config: dict) -> None:
    outputs = plan.final_outputs(default_config)
    for corpus in plan.comparison.corpora(default_config):
        assert f"results/{corpus}/comparison/tables/measures.csv" in outputs
    for corpus in plan.sequentiality.corpora(default_config):
        for model in plan.sequentiality.models(default_config):
            folder = f"results/{corpus}/sequentiality/tables/scores/{model}"
            assert {f"{folder}/sentences.csv", f"{folder}/stories.csv"} <= set(outputs)


@pytest.mark.slow
def test_a_run_exports_every_table_and_its_units_are_in_the_caption(measures_run: Path) -> None:
    """The measures run: the story table's CSV equals its Parquet, and each unit of its measure
    columns (tables/measure_units.csv) is in the caption."""
    text = " ".join((REPORT / "story_table.rst").read_text().split())
    compared = sorted((measures_run / "results").glob("*/comparison/measures.parquet"))
    assert compared
    for parquet in compared:
        folder = parquet.parent
        pdt.assert_frame_equal(
            tables.read(tables.STORY_TABLE, folder / "tables" / "measures.csv"),
            tables.read(tables.STORY_TABLE, parquet),
            check_dtype=False,
        )
        units = tables.read(tables.MEASURE_UNITS, folder / "tables" / "measure_units.csv")
        for unit in units["unit"].unique():
            assert f"**{unit}**" in text, f"{folder}: unit {unit!r} is not in the caption"
    scored = sorted((measures_run / "results").glob("*/sequentiality/scores/*/sentences.parquet"))
    assert scored
    for parquet in scored:
        csv = parquet.parents[2] / "tables" / "scores" / parquet.parent.name / "sentences.csv"
        pdt.assert_frame_equal(
            tables.read(tables.SENTENCE_SEQUENTIALITY, csv),
            tables.read(tables.SENTENCE_SEQUENTIALITY, parquet),
            check_dtype=False,
        )
