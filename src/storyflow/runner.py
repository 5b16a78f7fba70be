"""Glue between Snakemake ``script:`` rules and the library.

Every script in ``scripts/`` is a few lines::

    from storyflow.runner import run

    def main(smk):
        ...

    run(main, snakemake)

:func:`run` sends the library's log records to the rule's ``log:`` file (and to stderr) and
records the wall time of the step. The step runs in its job's progress scope
(:mod:`storyflow.progress`): a language-model job killed midway resumes where it stopped.
Whatever stops the step ends up in the rule's log, so that Snakemake's "check log file(s) for
error details" holds (on a cluster the log is all there is):

* a :class:`~storyflow.errors.StoryflowError` (a problem the user can fix): its message, one
  paragraph, no traceback;
* a full disk (``OSError`` ``ENOSPC`` anywhere in the exception's chain): one line naming the
  path being written (or the rule's outputs) and the space left there;
* any other exception (a bug, a damaged intermediate file, a library failure): the full
  traceback, then a one-line summary on stderr;
* a crash in native code (llama.cpp abort, segmentation fault): Python's fault handler writes
  the Python stack of every thread to the log.

All of them exit with status 1.
"""

from __future__ import annotations

import dataclasses
import errno
import faulthandler
import logging
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from storyflow import progress
from storyflow.errors import StoryflowError

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(log_path: str | Path | None, level: int = logging.INFO) -> None:
    """Log to ``log_path`` (created with its folder) and to stderr, replacing older handlers."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        root.addHandler(handler)
    root.setLevel(level)


def _chain(err: BaseException) -> Iterator[BaseException]:
    """``err`` and the exceptions it was raised from or while handling."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def disk_full(err: BaseException) -> OSError | None:
    """The ``ENOSPC`` error in ``err``'s chain, if the disk (or a quota) is full."""
    for link in _chain(err):
        if isinstance(link, OSError) and (
            link.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(link)
        ):
            return link
    return None


def _free_space(path: str | Path) -> str:
    """Free space on the file system holding ``path`` (its nearest existing folder)."""
    folder = Path(path).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return "free space unknown"
    return f"{free / 1e6:,.0f} MB free there"


def disk_full_message(err: OSError, smk: Any) -> str:
    """One line: which path could not be written, the space left there, and what to do."""
    path = err.filename or err.filename2
    if path:
        where = f"writing {path}"
        space = _free_space(path)
    else:
        outputs = [str(p) for p in (getattr(smk, "output", None) or [])]
        where = "writing " + (", ".join(outputs) if outputs else "its files")
        space = _free_space(outputs[0]) if outputs else "free space unknown"
    return (
        f"no space left on device {where} ({space}); free some space (or move the working "
        "directory to a larger disk) and run again"
    )


def _enable_fault_handler(root: logging.Logger) -> bool:
    """Send Python's fault handler (native crashes) to the rule's log file; True if enabled.

    Left alone when something else (``python -X faulthandler``, pytest) already enabled it.
    """
    if faulthandler.is_enabled():
        return False
    for handler in root.handlers:
        if isinstance(handler, logging.FileHandler) and handler.stream is not None:
            faulthandler.enable(file=handler.stream, all_threads=True)
            return True
    return False


def progress_path(smk: Any) -> Path | None:
    """The job's progress file (:mod:`storyflow.progress`): keyed by its rule, params and
    inputs (never by its threads or resources, which change no answer)."""
    params = getattr(smk, "params", None)
    if params is not None and hasattr(params, "items"):
        items = params.items()
    else:
        items = vars(params or SimpleNamespace()).items()
    return progress.job_path(
        getattr(smk, "rule", "script"),
        _paths(getattr(smk, "output", None)),
        [(str(k), v) for k, v in items],
        _paths(getattr(smk, "input", None)),
    )


def _paths(files: Any) -> list[str]:
    """The file paths of a Snakemake ``input``/``output`` (a named list) or of a stand-in
    (a namespace of paths or lists of paths, as tests pass), in order."""
    if files is None:
        return []
    if isinstance(files, str | Path):
        return [str(files)]
    values = vars(files).values() if isinstance(files, SimpleNamespace) else files
    return [p for value in values for p in _paths(value)]


def save(output: Any, **frames: Any) -> None:
    """Write each table of ``frames`` to the rule's output of the same name: Parquet for a
    ``.parquet`` path, CSV (no index) for anything else. A frame without an output of its
    name is a programming error (KeyError/AttributeError), never silently dropped."""
    for name, frame in frames.items():
        path = str(output[name] if isinstance(output, Mapping) else getattr(output, name))
        if path.endswith(".parquet"):
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)


def save_fields(output: Any, record: Any) -> None:
    """:func:`save` every table of the dataclass ``record``, each to the rule's output named as
    its field (a library result such as the passage sample's tables)."""
    save(output, **{f.name: getattr(record, f.name) for f in dataclasses.fields(record)})


def _error_in_log_file(log: logging.Logger, message: str) -> None:
    """``message`` as an ERROR line of the job's log file alone: the terminal (stderr) gets it
    once, as the ``storyflow: error in rule`` line that follows (an ERROR line there too
    said it twice)."""
    record = log.makeRecord(log.name, logging.ERROR, __file__, 0, "%s", (message,), None)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            handler.handle(record)


def run(main: Callable[[Any], None], smk: Any) -> None:
    """Run ``main(smk)`` for a Snakemake script; log whatever stops it, and exit 1 if it fails."""
    log_files = list(getattr(smk, "log", []) or [])
    setup_logging(log_files[0] if log_files else None)
    log = logging.getLogger("storyflow")
    rule = getattr(smk, "rule", "script")
    where = f" (log: {log_files[0]})" if log_files else ""
    handling_faults = _enable_fault_handler(logging.getLogger())
    start = time.perf_counter()
    try:
        with progress.job_scope(progress_path(smk)):
            main(smk)
    except StoryflowError as err:
        _error_in_log_file(log, str(err))
        print(f"\nstoryflow: error in rule {rule}: {err}\n", file=sys.stderr)
        sys.exit(1)
    except Exception as err:
        full = disk_full(err)
        if full is not None:
            message = disk_full_message(full, smk)
            raising, logging.raiseExceptions = logging.raiseExceptions, False
            try:  # the log may be on the full disk: no "--- Logging error ---" tracebacks
                _error_in_log_file(log, message)
            finally:
                logging.raiseExceptions = raising
            print(f"\nstoryflow: error in rule {rule}: {message}\n", file=sys.stderr)
            sys.exit(1)
        log.critical(
            "rule %s failed with an unexpected error, not a problem storyflow knows how to "
            "explain (a bug, a damaged intermediate file, a library failure); please report it "
            "with this log. Traceback:",
            rule,
            exc_info=True,
        )
        print(
            f"\nstoryflow: unexpected error in rule {rule}: {err.__class__.__name__}: {err}"
            f"{where}\n",
            file=sys.stderr,
        )
        sys.exit(1)
    finally:
        if handling_faults:  # the log file may close after this step: leave no fd behind
            faulthandler.disable()
    log.info("rule %s finished in %.1f s", rule, time.perf_counter() - start)
