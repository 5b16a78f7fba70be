"""Seeded randomness per item: an item's draws depend on the seed and its id, nothing else.

A story, book or question drawn with :func:`item_rng` gets the same random stream whatever
other items are in the run and in whatever order they are processed, so adding a story to a
corpus or a shard to a run never changes another item's sample.
"""

from __future__ import annotations

import zlib

import numpy as np


def stable_hash(text: str) -> int:
    """A process-independent 32-bit hash of ``text`` (CRC-32 of its UTF-8 bytes).

    Python's built-in ``hash`` of a string is salted per process, so it cannot seed anything.
    """
    return zlib.crc32(text.encode("utf-8"))


def item_rng(seed: int, item: object) -> np.random.Generator:
    """numpy's default generator seeded with ``[seed, stable_hash(str(item))]``."""
    return np.random.default_rng([int(seed), stable_hash(str(item))])
