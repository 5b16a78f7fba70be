"""storyflow.tables: each table defined once; one validation that names file, missing, found."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from storyflow import tables
from storyflow.errors import StoryflowError


def test_read_names_the_file_the_missing_and_the_found_columns(tmp_path: Path) -> None:
    path = tmp_path / "nll.parquet"
    pd.DataFrame({"story_id": ["a"], "nll": [1.0]}).to_parquet(path)
    with pytest.raises(tables.TableError) as err:
        tables.read(tables.NLL, path)
    message = str(err.value)
    assert str(path) in message
    assert "lacks column(s) sentence_idx, model, formulation" in message
    assert "it has story_id, nll" in message


def test_read_keeps_labels_as_text_in_csv(tmp_path: Path) -> None:
    path = tmp_path / "summary.csv"
    frame = pd.DataFrame(
        {
            "model": ["m"],
            "formulation": ["topic"],
            "history": ["1"],
            "story_type": ["recalled"],
            "measure": ["seq"],
            "n": [3],
            "mean": [0.5],
            "sd": [0.1],
            "ci_low": [0.2],
            "ci_high": [0.8],
        }
    )
    frame.to_csv(path, index=False)
    back = tables.read(tables.SUMMARY, path)
    assert back["history"].tolist() == ["1"]
    assert back["n"].tolist() == [3]


def test_needs_checks_a_subset_and_rejects_unknown_columns() -> None:
    frame = pd.DataFrame({"story_id": ["a"], "story_type": ["x"]})
    assert tables.STORIES.check(frame, needs=["story_id", "story_type"]) is frame
    with pytest.raises(tables.TableError, match="lacks column"):
        tables.STORIES.check(frame)
    with pytest.raises(ValueError, match="not columns of the stories table"):
        tables.STORIES.check(frame, needs=["nonsense"])


def test_frame_and_empty_follow_the_definition() -> None:
    rows = tables.EXCLUDED.frame(
        [tables.EXCLUDED.row(story_id="s1", story_type="recalled", row=3, reason="empty story")]
    )
    assert rows.columns.tolist() == tables.EXCLUDED.names
    assert rows["row"].dtype == "int64"
    empty = tables.NLL.empty()
    assert empty.columns.tolist() == tables.NLL.names
    assert empty["nll"].dtype == "float64" and empty["truncated"].dtype == "bool"


def test_read_all_concatenates_and_needs_a_path() -> None:
    with pytest.raises(StoryflowError, match="no story sequentiality tables"):
        tables.read_all(tables.STORY_SEQUENTIALITY, [])


def test_a_row_by_column_name_is_checked_against_its_table() -> None:
    """Tables are built from records by column name: a misspelt or missing column is named,
    and the order of the keys does not matter."""
    row = {c: None for c in tables.VALIDITY.names}
    row |= {"value": 0.7, "ci_low": 0.6, "ci_high": 0.8, "threshold": 0.5, "n": 10}
    row |= {"passed": True, "measure": "tension", "check": "auroc"}
    reversed_keys = dict(reversed(list(row.items())))
    frame = tables.VALIDITY.frame([reversed_keys])
    assert list(frame.columns) == tables.VALIDITY.names and frame["value"].iloc[0] == 0.7
    with pytest.raises(ValueError, match=r"lacks \['detail'\] and has unknown keys \['details'\]"):
        tables.VALIDITY.row(**{k: v for k, v in row.items() if k != "detail"}, details="x")


def test_frame_refuses_a_row_by_position_and_a_record_missing_a_column() -> None:
    """A row in column order could put a value under the wrong column unnoticed: ``frame``
    takes records by column name only, and each must have every column."""
    with pytest.raises(TypeError, match=r"record by column name.*not a tuple in column order"):
        tables.EXCLUDED.frame([("s1", "recalled", 3, "empty story")])
    with pytest.raises(TypeError, match="not a list in column order"):
        tables.EXCLUDED.frame([["s1", "recalled", 3, "empty story"]])
    full = tables.EXCLUDED.row(story_id="s1", story_type="recalled", row=3, reason="empty")
    with pytest.raises(TypeError, match="excluded stories row"):
        tables.EXCLUDED.frame([full, ("s2", "recalled", 4, "empty")])  # every row is checked
    with pytest.raises(ValueError, match=r"lacks \['reason'\] and has unknown keys none"):
        tables.EXCLUDED.frame([{"story_id": "s1", "story_type": "recalled", "row": 3}])
    assert tables.EXCLUDED.frame([]).columns.tolist() == tables.EXCLUDED.names


def test_a_partial_frame_checks_each_record_against_the_columns_it_promises() -> None:
    """Records of a table but the columns the caller adds next (the validity labels): a record
    lacking one of the others, or holding a key the table does not have, is refused by name,
    where a plain ``pd.DataFrame(rows, columns=...)`` would fill NaN or drop the value."""
    from storyflow.tables.base import Table

    table = Table("t", {"a": "int64", "b": "float64", "valid": "bool"})
    frame = table.partial([{"a": 1, "b": 0.5}], omit=("valid",))
    assert list(frame.columns) == ["a", "b"] and frame.loc[0, "b"] == 0.5
    with pytest.raises(ValueError, match=r"lacks \['b'\]"):
        table.partial([{"a": 1}], omit=("valid",))
    with pytest.raises(ValueError, match=r"unknown keys \['c'\]"):
        table.partial([{"a": 1, "b": 0.5, "c": 2}], omit=("valid",))
    with pytest.raises(ValueError, match="not columns"):
        table.partial([], omit=("label",))
    extra = table.partial([{"a": 1, "b": 0.5, "x": 3}], omit=("valid",), extra=("x",))
    assert list(extra.columns) == ["a", "b", "x"]
