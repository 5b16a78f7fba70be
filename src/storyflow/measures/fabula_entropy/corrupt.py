"""Corruptions of a story version, each recorded with what it changed.

- EWC, :func:`antonym_swap`: k descriptive words (slots, :mod:`.questions`) replaced by an
  antonym from the lexicon (:mod:`.lexicon`), case kept; nothing else in the story is adjusted,
  so the swapped word contradicts what surrounds it;
- ETC, :func:`span_shuffle`: the order of ``span`` consecutive lines (for ETC, plot points:
  :func:`.questions.plot_points`), starting at a random line, permuted so that the new order
  differs from the original (the identity permutation and permutations that leave the text
  unchanged, e.g. repeated lines, are redrawn).

Both draw from ``numpy`` generators given by the caller (``seeds.item_rng``); a corruption that
cannot change the story returns ``None`` and the caller retries with the next attempt's seed,
then lists the story as excluded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from storyflow.measures.fabula_entropy.questions import Slot


@dataclass(frozen=True)
class Change:
    """One change: the line (0-based) and its text before and after; for a swap, the token's
    index in the line and the new ``word``; for a shuffle, the span's first line, the span's
    lines joined by a space before and after, token -1, word "" and the new order in
    ``detail``."""

    line: int
    token: int
    original: str
    changed: str
    detail: str
    word: str = ""


def _cased(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def antonym_swap(
    tokens: list[list[tuple[str, str]]],
    slots: list[Slot],
    k: int,
    lexicon: dict[tuple[str, str], list[str]],
    rng: np.random.Generator,
) -> tuple[list[str], list[Change]] | None:
    """Swap ``k`` slots for antonyms; ``None`` when fewer than ``k`` slots have one.

    ``tokens``: per line, its (text, trailing whitespace) pairs (spaCy ``text_with_ws`` split),
    indexed by the slots' ``token``. Returns the new lines and one :class:`Change` per swap.
    """
    swappable = [s for s in slots if lexicon.get((s.word.lower(), s.pos))]
    if len(swappable) < k or k < 1:
        return None
    chosen = sorted(
        (swappable[int(i)] for i in rng.choice(len(swappable), size=k, replace=False)),
        key=lambda s: (s.line, s.token),
    )
    new = [list(line) for line in tokens]
    changes = []
    for slot in chosen:
        antonym = _cased(lexicon[(slot.word.lower(), slot.pos)][0], slot.word)
        text, ws = new[slot.line][slot.token]
        before = "".join(t + w for t, w in new[slot.line])
        new[slot.line][slot.token] = (antonym, ws)
        after = "".join(t + w for t, w in new[slot.line])
        changes.append(
            Change(
                slot.line,
                slot.token,
                before.strip(),
                after.strip(),
                f"{text} -> {antonym}",
                antonym,
            )
        )
    return ["".join(t + w for t, w in line).strip() for line in new], changes


def span_shuffle(
    lines: list[str], span: int, rng: np.random.Generator
) -> tuple[list[str], list[Change]] | None:
    """Permute ``span`` consecutive lines so that the text changes; ``None`` when the story has
    fewer than ``span`` lines or the drawn span cannot change (its lines are all equal)."""
    if span < 2 or len(lines) < span:
        return None
    start = int(rng.integers(0, len(lines) - span + 1))
    block = lines[start : start + span]
    if len(set(block)) == 1:
        return None
    while True:
        order = [int(i) for i in rng.permutation(span)]
        shuffled = [block[i] for i in order]
        if shuffled != block:
            break
    new = lines[:start] + shuffled + lines[start + span :]
    detail = "order " + ",".join(str(start + i + 1) for i in order)
    change = Change(start, -1, " ".join(block), " ".join(shuffled), detail)
    return new, [change]
