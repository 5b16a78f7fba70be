"""The statistics settings every measure shares: the config's ``stats`` block, named once.

A job's params take the ones it depends on from here (:func:`settings`), so every measure reads
the same key under the same name and a change re-runs exactly the jobs that use it:

* ``confidence`` (``stats.confidence``): the level of every interval;
* ``resamples`` and ``seed`` (``stats.resamples``, ``stats.seed``): the percentile bootstrap
  of every interval (:mod:`storyflow.bootstrap`): validity checks, bounded group means and
  contrasts, CEEval, the comparison's correlations, the replication tables;
* ``min_group_size`` (``stats.min_group_size``): the fewest stories a group needs before a
  contrast is tested;
* ``min_sentences`` (``stats.min_sentences``): the fewest sentences of a story in the
  sequentiality statistics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The keys of :func:`settings` (the ``stats`` block's keys).
KEYS = ("confidence", "resamples", "seed", "min_group_size", "min_sentences")
#: The keys of the bootstrap intervals (:func:`interval`).
INTERVAL = ("confidence", "resamples", "seed")


def settings(config: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The shared statistics settings (:data:`KEYS`), or only ``keys`` of them: a job's params
    hold only what it depends on, so a change of another re-runs nothing."""
    values = {key: config["stats"][key] for key in KEYS}
    unknown = [k for k in keys if k not in values]
    if unknown:
        raise KeyError(f"no statistics setting {', '.join(unknown)} (settings: {', '.join(KEYS)})")
    return {k: values[k] for k in keys} if keys else values


def interval(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a bootstrap interval depends on: ``confidence``, ``resamples``, ``seed``."""
    return settings(config, *INTERVAL)


def replication(config: Mapping[str, Any]) -> dict[str, Any]:
    """The replication tables' statistics: the intervals' settings and the smallest group
    tested."""
    return settings(config, *INTERVAL, "min_group_size")
