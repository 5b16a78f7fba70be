"""History-size labels shared by every table.

A history size is stored as text in the ``history`` column: ``"0"`` .. ``"H"`` for h preceding
sentences (``"0"`` = no preceding sentence: topic only, or start-of-text only) and ``"full"`` for
all preceding sentences. Text keeps one column type for both kinds; :func:`history_key` sorts them
numerically with ``"full"`` last.
"""

from __future__ import annotations

from collections.abc import Iterable

FULL = "full"


def history_labels(max_history: int, *, include_zero: bool = True) -> list[str]:
    """Labels for h = 0 (optional) .. max_history, then ``"full"``."""
    start = 0 if include_zero else 1
    return [str(h) for h in range(start, max_history + 1)] + [FULL]


def history_key(label: str) -> int:
    """Sort key: the number of sentences, with ``"full"`` after every finite h."""
    return 10**9 if label == FULL else int(label)


def sort_histories(labels: Iterable[str]) -> list[str]:
    """Distinct labels in numeric order, ``"full"`` last."""
    return sorted(set(labels), key=history_key)
