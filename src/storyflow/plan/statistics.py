"""The statistics settings the measures share, named once: a job's params take the ones it
depends on from here, so every measure reads the same key under the same name.

* ``confidence`` (``stats.confidence``): the level of every interval;
* ``bootstrap`` and ``seed`` (``validity.bootstrap``, ``validity.seed``): the resamples and seed
  of the validity checks' intervals and of bounded group means (tension, fabula entropy, plot
  holes);
* ``min_group_size`` (``validity.min_group_size``): the fewest stories a group needs before a
  contrast is tested;
* ``min_sentences`` (``stats.min_sentences``): the fewest sentences of a story in the
  sequentiality statistics.

The replication tables resample with their own ``stats.bootstrap`` and ``stats.seed``
(:func:`replication`), the comparison with ``comparison.bootstrap`` and ``comparison.seed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The keys of :func:`settings`.
KEYS = ("confidence", "bootstrap", "seed", "min_group_size", "min_sentences")


def settings(config: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The shared statistics settings (:data:`KEYS`), or only ``keys`` of them: a job's params
    hold only what it depends on, so a change of another re-runs nothing."""
    values = {
        "confidence": config["stats"]["confidence"],
        "bootstrap": config["validity"]["bootstrap"],
        "seed": config["validity"]["seed"],
        "min_group_size": config["validity"]["min_group_size"],
        "min_sentences": config["stats"]["min_sentences"],
    }
    unknown = [k for k in keys if k not in values]
    if unknown:
        raise KeyError(f"no statistics setting {', '.join(unknown)} (settings: {', '.join(KEYS)})")
    return {k: values[k] for k in keys} if keys else values


def replication(config: Mapping[str, Any]) -> dict[str, Any]:
    """The replication tables' statistics: the interval level, their own bootstrap resamples
    and seed (``stats.bootstrap``, ``stats.seed``) and the smallest group tested."""
    return {
        "confidence": config["stats"]["confidence"],
        "bootstrap": config["stats"]["bootstrap"],
        "seed": config["stats"]["seed"],
        "min_group_size": config["validity"]["min_group_size"],
    }


def comparison(config: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison's correlation intervals: resamples, seed (``comparison.bootstrap``,
    ``comparison.seed``) and level."""
    return {
        "n_resamples": config["comparison"]["bootstrap"],
        "seed": config["comparison"]["seed"],
        "confidence": config["stats"]["confidence"],
    }
