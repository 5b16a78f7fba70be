"""User-facing errors.

A :class:`StoryflowError` is raised for a problem the *user* can fix (a bad input file, a
missing model, an invalid setting). Its message names the file, row and problem; the rule's
script logs it and exits non-zero without a traceback (see :func:`storyflow.runner.run`).
Anything else that escapes is a bug in storyflow and keeps its traceback.
"""

from __future__ import annotations


class StoryflowError(Exception):
    """A problem with the user's input or settings, explained in the message."""


class InputDataError(StoryflowError):
    """An input table is malformed: the message names the file, row (1-based line) and problem."""

    def __init__(self, path: object, problem: str, row: int | None = None) -> None:
        where = f"{path}" if row is None else f"{path}, row {row}"
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.row = row
        self.problem = problem
