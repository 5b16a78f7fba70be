"""How the replication tables write a number in words (reasons, the report's first page)."""

from __future__ import annotations


def number(value: float) -> str:
    """A figure as the report writes it: three significant digits, two below 0.01."""
    return f"{value:.3g}" if abs(value) >= 0.01 or value == 0 else f"{value:.2g}"
