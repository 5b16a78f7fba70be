"""Three acts of a story: its sentences cut into thirds (the first act establishes, the last
two may contradict it).

The paper asks a model for the act boundaries; here they are fixed, so both makers and every
model see the same boundaries: act 1 holds the first ceil(n/3) sentences, act 2 the next
ceil((n − |act 1|)/2), act 3 the rest. A story needs at least ``min_sentences`` (≥ 3) sentences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def act_bounds(n_sentences: int, min_sentences: int) -> tuple[int, int] | None:
    """(first sentence of act 2, first of act 3), 0-based; None when the story is too short."""
    if n_sentences < max(3, min_sentences):
        return None
    act1 = math.ceil(n_sentences / 3)
    act2 = math.ceil((n_sentences - act1) / 2)
    return act1, act1 + act2


def split_acts(sentences: Sequence[str], min_sentences: int) -> list[list[str]] | None:
    """The sentences as three acts (lists), or None when the story is too short."""
    bounds = act_bounds(len(sentences), min_sentences)
    if bounds is None:
        return None
    a, b = bounds
    return [list(sentences[:a]), list(sentences[a:b]), list(sentences[b:])]
