"""A long job's progress, kept per item in a side file, so that a killed job resumes.

A language-model job (sampling endings, answering questions, judging, detecting, making flawed
stories) asks its model many independent questions. Each answer is written to the job's
*progress file* (SQLite, one row per question, committed as soon as it is answered) before the
job goes on. When the job is killed (SIGKILL, a full disk, a crashed llama.cpp, a server that
stays down), Snakemake runs it again; the rerun finds the answers already given and asks the
model only the questions that have none, so nothing is asked twice and nothing answered is lost.

* **Where:** ``<folder of the job's first output>/.progress/<output name>.<key>.sqlite``.
* **Keyed by the job's settings:** ``<key>`` is a hash of the rule, its params and its inputs'
  paths; a rerun with a changed setting gets another key and starts afresh (the progress files
  of other keys for the same output are removed when the job starts). Within a file each
  question is keyed by everything that decides its answer (the model's name, the kind of call,
  the prompt, the options or sampling settings), so an answer is never reused for another
  question.
* **Written atomically:** the job writes its outputs only when every item is done (Snakemake
  removes a failed job's outputs); the progress file is removed once the job has succeeded.

Replayed answers are the stored results themselves (pickled), so the resumed output equals the
output of an uninterrupted run: sampling seeds are per question (``SamplingSettings.seed`` and
the sample's index), never a generator's state carried from one question to the next.

:func:`job_scope` (entered by :func:`storyflow.runner.run` for every script) makes the job's
file the one :func:`current` returns; ``storyflow.lm.connect.open_model`` attaches it to every
model the job opens.

**Progress in the log.** A long loop shows a tqdm bar on stderr; a SLURM log or a parallel run
(whose stderr interleaves jobs) shows no bar worth reading. :class:`LoggedBar` is tqdm that also
writes a line through :mod:`logging` (so into the rule's ``log:`` file, see
:func:`storyflow.runner.run`) when it starts, every :func:`log_interval` seconds
(``$STORYFLOW_PROGRESS_SECONDS``, default 60) and when it ends: items done of the total, the
rate (items per second, or seconds per item below one a second) and the time left at that rate.
Modules use it in place of tqdm (``from storyflow.progress import LoggedBar as tqdm``).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import logging
import math
import os
import pickle
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from tqdm import tqdm

from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)

#: The folder, beside a job's first output, that holds the progress files.
FOLDER = ".progress"


class Progress:
    """The answers a job has already been given, in one SQLite file (see the module docstring).

    ``asked``: questions answered by a model in this run (stored); ``replayed``: questions
    whose answers came from the file (not asked again)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None)  # autocommit per item
        # a rollback journal, not WAL: WAL needs shared memory, which network file systems (a
        # cluster's shared results folder) do not give; one writer only, so nothing is lost
        self._db.execute("PRAGMA journal_mode=DELETE")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS item (key TEXT PRIMARY KEY, value BLOB)")
        self.asked = 0
        self.replayed = 0
        (self.stored,) = self._db.execute("SELECT COUNT(*) FROM item").fetchone()
        if self.stored:
            log.info("resuming: %d answers already in %s", self.stored, self.path)

    @staticmethod
    def key(*parts: Any) -> str:
        """The key of one question: a hash of the ``repr`` of everything that decides its
        answer (prompts are strings, token ids or chat messages; settings are dataclasses)."""
        return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()

    def get(self, key: str) -> Any | None:
        """The stored answer of ``key`` (counted as replayed), or None."""
        row = self._db.execute("SELECT value FROM item WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        self.replayed += 1
        return pickle.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        """Store the answer of ``key`` (committed before this returns; counted as asked)."""
        self._db.execute(
            "INSERT OR REPLACE INTO item (key, value) VALUES (?, ?)", (key, pickle.dumps(value))
        )
        self.asked += 1

    def close(self) -> None:
        self._db.close()


_CURRENT: ContextVar[Path | None] = ContextVar("storyflow_progress", default=None)
_OPEN: dict[Path, Progress] = {}


def current() -> Progress | None:
    """The running job's progress file (opened once per job), or None outside a job."""
    path = _CURRENT.get()
    if path is None:
        return None
    if path not in _OPEN:
        _OPEN[path] = Progress(path)
    return _OPEN[path]


def job_path(rule: str, outputs: list[str], params: Any, inputs: list[str]) -> Path | None:
    """The progress file of a job (module docstring), or None for a job without outputs."""
    if not outputs:
        return None
    first = Path(outputs[0])
    digest = Progress.key(rule, params, sorted(inputs))[:16]
    return first.parent / FOLDER / f"{first.name}.{digest}.sqlite"


def _remove(path: Path) -> None:
    for extra in ("", "-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)


@contextlib.contextmanager
def job_scope(path: Path | None) -> Iterator[None]:
    """Make ``path`` the job's progress file while the job runs: the files of other settings
    for the same output are removed first; the job's own file is removed when the job
    succeeds and kept (for the rerun) when it fails."""
    if path is None:
        yield
        return
    output = path.name.rsplit(".", 2)[0]
    for stale in path.parent.glob(f"{glob.escape(output)}.*.sqlite"):
        if stale != path and stale.name.rsplit(".", 2)[0] == output:
            log.info("progress of other settings removed: %s", stale)
            _remove(stale)
    token = _CURRENT.set(path)
    try:
        yield
    except BaseException:
        kept = _OPEN.get(path)
        if kept is not None and kept.stored + kept.asked:
            log.warning(
                "the job stopped; the %d answers it has are kept in %s: run the same command "
                "again and it resumes, asking only the questions not answered yet",
                kept.stored + kept.asked,
                path,
            )
        raise
    finally:
        _CURRENT.reset(token)
        opened = _OPEN.pop(path, None)
        if opened is not None:
            opened.close()
            if opened.asked + opened.replayed:  # a job that journals nothing (NLL) says nothing
                log.info(
                    "progress: %d answers asked in this run, %d replayed from %s (answers kept "
                    "by an earlier run of this job that stopped)",
                    opened.asked,
                    opened.replayed,
                    path,
                )
    _remove(path)  # reached only when the job succeeded
    with contextlib.suppress(OSError):
        path.parent.rmdir()  # when no other job's progress is there


# --- progress in the rule's log ----------------------------------------------------------------

#: The environment variable that sets :func:`log_interval` (seconds between two log lines).
INTERVAL_VARIABLE = "STORYFLOW_PROGRESS_SECONDS"
#: Seconds between two progress lines in the log when the variable is not set.
DEFAULT_INTERVAL = 60.0


def log_interval() -> float:
    """Seconds between two progress lines of a :class:`LoggedBar` in the log:
    ``$STORYFLOW_PROGRESS_SECONDS``, else :data:`DEFAULT_INTERVAL` (60 s).

    Raises:
        StoryflowError: the variable is not a number of seconds >= 0.
    """
    text = os.environ.get(INTERVAL_VARIABLE, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not seconds >= 0:
        raise StoryflowError(
            f"{INTERVAL_VARIABLE}={text!r}: not a number of seconds of at least 0 (the time "
            f"between two progress lines in a rule's log; unset it for {DEFAULT_INTERVAL:.0f} s)"
        )
    return seconds


def duration(seconds: float) -> str:
    """``seconds`` in words a log reader takes in at a glance: ``42 s``, ``3 min 07 s``,
    ``2 h 05 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class LoggedBar(tqdm):  # type: ignore[misc]  # tqdm ships no types: a class of Any
    """A tqdm progress bar (on stderr) that also logs its progress (module docstring).

    Takes tqdm's arguments, and ``every`` (seconds between two log lines; None:
    :func:`log_interval`) and ``clock`` (a monotonic clock in seconds; tests pass a fake one).
    ``disable=True`` (nothing to do) hides the bar and the log lines alike; ``disable=None``
    (tqdm: no bar unless stderr is a terminal) still logs.
    """

    def __init__(
        self,
        iterable: Any = None,
        *args: Any,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("file", sys.stderr)
        super().__init__(iterable, *args, **kwargs)
        self._quiet = kwargs.get("disable") is True
        self._every = log_interval() if every is None else every
        self._clock = clock
        self._label = str(kwargs.get("desc") or "progress")
        given = str(kwargs.get("unit") or "it")
        self._unit = "item" if given == "it" else given  # tqdm's default, in words
        self._stopped = False  # the loop ended by an error: its last line says "stopped"
        self._done = int(kwargs.get("initial") or 0)
        self._started = clock()
        self._logged = self._started
        self._ended = False
        if not self._quiet:
            log.info("%s", self._line(self._started))

    def __iter__(self) -> Iterator[Any]:
        """Each item of the iterable, counted (:meth:`update`) once the loop's body is done."""
        if self._quiet:
            yield from super().__iter__()
            return
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        except BaseException:
            self._stopped = True
            raise
        finally:
            self.close()

    def update(self, n: float | None = 1) -> bool | None:
        """Count ``n`` more items done; log a line when ``every`` seconds have passed
        since the last one."""
        shown = super().update(n)
        self._done += int(n or 0)
        now = self._clock()
        if not self._quiet and not self._ended and now - self._logged >= self._every:
            self._logged = now
            log.info("%s", self._line(now))
        return shown

    def close(self) -> None:
        """Log the final line (items done, time taken, mean rate), then close the bar."""
        if not getattr(self, "_ended", True) and not self._quiet:
            self._ended = True
            log.info("%s", self._line(self._clock(), final=True))
        super().close()

    def _line(self, now: float, final: bool = False) -> str:
        """``desc: done/total units (percent), rate, time left`` (or time taken when ``final``;
        ``desc: stopped at done/total units ...`` when the loop was left before its end, by an
        error: not "done")."""
        total = self.total
        done = f"{self._done}/{total:g}" if total else f"{self._done}"
        share = f" ({100 * self._done / total:.0f}%)" if total else ""
        units = plural(self._unit, total if total else self._done)
        elapsed = now - self._started
        rate = self._done / elapsed if elapsed > 0 else math.nan
        if not rate > 0:
            pace = "rate unknown"
        elif rate >= 1:
            pace = f"{rate:.2f} {self._unit}/s"
        else:
            pace = f"{1 / rate:.1f} s/{self._unit}"
        if final and self._stopped:
            return (
                f"{self._label}: stopped at {done} {units}{share} after {duration(elapsed)}, {pace}"
            )
        if final:
            return f"{self._label}: {done} {units}{share} done in {duration(elapsed)}, {pace}"
        if self._done == 0:
            return f"{self._label}: {done} {units}{share}, started"
        left = f", {duration(max(total - self._done, 0) / rate)} left" if total and rate > 0 else ""
        return f"{self._label}: {done} {units}{share}, {pace}{left}"


def plural(unit: str, count: float) -> str:
    """``unit`` for ``count`` of it: ``story`` for 1, else ``stories``, ``batches``,
    ``versions``."""
    if count == 1 or not unit or unit.endswith("s"):
        return unit
    if unit.endswith("y") and unit[-2:-1] not in ("a", "e", "i", "o", "u"):
        return unit[:-1] + "ies"
    if unit.endswith(("x", "ch", "sh")):
        return unit + "es"
    return unit + "s"
