"""The validity tables (docs/validity.md) the enabled measures write."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.fabula_entropy as fabula_entropy
import storyflow.plan.plot_holes as plot_holes
import storyflow.plan.tension as tension


def files(config: Mapping[str, Any]) -> list[str]:
    """The validity tables (:data:`storyflow.tables.VALIDITY`) the enabled measures write, in
    measure order; gathered into ``results/validity.csv`` (docs/validity.md)."""
    return [
        *tension.validity_tables(config),
        *(
            fabula_entropy.OUT.of(c, "tables", "validity.csv")
            for c in fabula_entropy.corpora(config)
        ),
        *([plot_holes.VALIDITY] if plot_holes.corpora(config) else []),
    ]
