"""Glue between Snakemake ``script:`` rules and the library.

Every script in ``scripts/`` is a few lines::

    from storyflow.runner import run

    def main(smk):
        ...

    run(main, snakemake)

:func:`run` sends the library's log records to the rule's ``log:`` file (and to stderr),
turns a :class:`~storyflow.errors.StoryflowError` into a one-paragraph message and exit
status 1 (no traceback for user mistakes), and records the wall time of the step.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def run(main: Callable[[Any], None], smk: Any) -> None:
    """Run ``main(smk)`` for a Snakemake script with logging and clean user-error handling."""
    log_files = list(getattr(smk, "log", []) or [])
    setup_logging(log_files[0] if log_files else None)
    log = logging.getLogger("storyflow")
    rule = getattr(smk, "rule", "script")
    start = time.perf_counter()
    try:
        main(smk)
    except StoryflowError as err:
        log.error("%s", err)
        print(f"\nstoryflow: error in rule {rule}: {err}\n", file=sys.stderr)
        sys.exit(1)
    log.info("rule %s finished in %.1f s", rule, time.perf_counter() - start)
