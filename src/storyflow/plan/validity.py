"""The validity tables (docs/validity.md) the enabled measures write."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import storyflow.plan.sequentiality as sequentiality
from storyflow.plan.layout import Layout, each_corpus
from storyflow.plan.registry import MEASURES

#: Its logs: ``logs/validity/...`` (the table itself: :data:`storyflow.plan.layout.VALIDITY`).
OUT = Layout("validity")


def files(config: Mapping[str, Any]) -> list[str]:
    """The validity tables (:data:`storyflow.tables.VALIDITY`) the enabled measures write, in
    the registry's order of the measures; gathered into ``results/validity.csv``
    (docs/validity.md)."""
    return [path for measure in MEASURES for path in measure.validity_tables(config)]


def effect_tables(config: Mapping[str, Any]) -> list[str]:
    """The sequentiality effect sizes of every analysed corpus, whose contrasts' group sizes
    the gathered validity table checks
    (:func:`storyflow.measures.sequentiality.validity.contrast_checks`)."""
    return each_corpus(sequentiality.corpora(config), sequentiality.EFFECT_SIZES)
