"""Narrative sense's tables: lemmas, the stories' scores and the pair scores."""

from __future__ import annotations

from storyflow.tables.base import Table

NS_STORIES = Table(
    "narrative-sense stories",
    {"story_id": "object", "group": "object", "text": "object"},
    extra=True,
    doc="Stories of one narrative-sense source; group = the corpus's grouping label.",
)

LEMMAS = Table(
    "lemmas",
    {
        "story_id": "object",
        "group": "object",
        "n_words": "int64",
        "lemmas": "object",
        "positions": "object",
    },
    extra=True,
    doc="Content lemmas of a story with their word positions (0-based word tokens).",
)

PAIR_SCORES = Table(
    "narrative-sense story scores",
    {
        "story_id": "object",
        "group": "object",
        "n_words": "int64",
        "median_pmi_top": "float64",
        "pair_pmi": "object",
    },
    key=("story_id",),
    extra=True,
    doc="Per story: its lemma-pair PMIs (natural log, descending) and their summaries; the "
    "rank-sum test against a random story of its group adds p and the threshold verdict.",
)
