"""storyflow.runner.run: whatever stops a rule's script reaches the rule's log."""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from storyflow.errors import StoryflowError
from storyflow.runner import disk_full, run


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def _run(tmp_path: Path, main: Callable[[Any], None]) -> tuple[int, str]:
    """Run ``main`` as the rule 'demo' would; returns the exit status and the log's text."""
    log_file = tmp_path / "logs" / "demo.log"
    smk = SimpleNamespace(
        rule="demo", log=[str(log_file)], output=[str(tmp_path / "results" / "out.parquet")]
    )
    with pytest.raises(SystemExit) as exited:
        run(main, smk)
    return int(exited.value.code or 0), log_file.read_text()


def _parse_table(smk: Any) -> None:
    """A library failure deep in a call: not a problem storyflow knows how to explain."""
    import pandas as pd

    frame = pd.DataFrame({"a": [1]})
    frame["missing column"].sum()


def test_unexpected_error_logs_its_full_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text = _run(tmp_path, _parse_table)
    assert status == 1
    assert "rule demo failed with an unexpected error" in text
    assert "Traceback (most recent call last):" in text
    assert 'frame["missing column"].sum()' in text  # the frame that failed, with its source
    assert "KeyError: 'missing column'" in text
    err = capsys.readouterr().err
    assert "storyflow: unexpected error in rule demo: KeyError: 'missing column'" in err
    assert f"(log: {tmp_path / 'logs' / 'demo.log'})" in err


def test_user_error_is_one_message_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def main(smk: Any) -> None:
        raise StoryflowError("stories.csv, row 3: empty AssignmentId")

    status, text = _run(tmp_path, main)
    assert status == 1
    assert "ERROR storyflow: stories.csv, row 3: empty AssignmentId" in text
    assert "Traceback" not in text
    # issue 56: the terminal says it once (no ERROR line before storyflow's own)
    err = capsys.readouterr().err
    assert err.count("empty AssignmentId") == 1, err
    assert "storyflow: error in rule demo: stories.csv, row 3: empty AssignmentId" in err


def test_full_disk_is_one_line_naming_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "results" / "nll" / "shard-0.parquet"

    def main(smk: Any) -> None:
        try:
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        except OSError as err:  # as a library would wrap it
            raise RuntimeError("could not write the table") from err

    status, text = _run(tmp_path, main)
    assert status == 1
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1
    assert f"no space left on device writing {target} (" in lines[0]
    assert "MB free there" in lines[0]
    assert "Traceback" not in text and "Traceback" not in capsys.readouterr().err


def test_full_disk_without_a_file_name_names_the_outputs(tmp_path: Path) -> None:
    def main(smk: Any) -> None:
        raise OSError("[Errno 28] No space left on device")  # e.g. pyarrow's message

    status, text = _run(tmp_path, main)
    assert status == 1
    assert f"no space left on device writing {tmp_path / 'results' / 'out.parquet'}" in text


def test_disk_full_detection() -> None:
    assert disk_full(OSError(errno.ENOSPC, "No space left on device")) is not None
    assert disk_full(OSError(errno.EACCES, "Permission denied")) is None
    assert disk_full(ValueError("x")) is None


def test_success_logs_the_wall_time(tmp_path: Path) -> None:
    log_file = tmp_path / "demo.log"
    run(lambda smk: logging.getLogger("storyflow.demo").info("working"), SimpleNamespace(
        rule="demo", log=[str(log_file)]
    ))  # fmt: skip
    text = log_file.read_text()
    assert "working" in text and "rule demo finished in" in text


def test_save_writes_each_table_to_its_output_by_suffix(tmp_path) -> None:
    import pandas as pd

    from storyflow.runner import save

    frame = pd.DataFrame({"story_id": ["a", "b"], "value": [1.5, 2.0]})
    output = SimpleNamespace(table=str(tmp_path / "t.csv"), rows=str(tmp_path / "r.parquet"))
    save(output, table=frame, rows=frame.assign(value=[3.0, 4.0]))
    assert (tmp_path / "t.csv").read_text().splitlines() == ["story_id,value", "a,1.5", "b,2.0"]
    assert pd.read_parquet(tmp_path / "r.parquet")["value"].tolist() == [3.0, 4.0]
    save({"table": str(tmp_path / "m.csv")}, table=frame)  # a mapping, as tests pass
    assert (tmp_path / "m.csv").is_file()
    with pytest.raises(AttributeError):
        save(output, missing=frame)  # a table without an output is never dropped silently


def test_save_fields_writes_every_table_of_a_record_to_its_output(tmp_path) -> None:
    from dataclasses import dataclass

    import pandas as pd

    from storyflow.runner import save_fields

    @dataclass(frozen=True)
    class Tables:
        stories: pd.DataFrame
        counts: pd.DataFrame

    record = Tables(pd.DataFrame({"story_id": ["a"]}), pd.DataFrame({"n": [2]}))
    output = SimpleNamespace(stories=str(tmp_path / "s.parquet"), counts=str(tmp_path / "c.csv"))
    save_fields(output, record)
    assert pd.read_parquet(tmp_path / "s.parquet")["story_id"].tolist() == ["a"]
    assert (tmp_path / "c.csv").read_text().splitlines() == ["n", "2"]
    with pytest.raises(AttributeError):
        save_fields(SimpleNamespace(stories=output.stories), record)  # no output for counts
