"""Replication's tables: the papers' published figures and ours beside them."""

from __future__ import annotations

from storyflow.tables.base import Table

PUBLISHED = Table(
    "published results",
    {
        "id": "object",
        "source": "object",
        "corpus": "object",
        "quantity": "object",
        "setting": "object",
        "group": "object",
        "model": "object",
        "value": "float64",
        "direction": "object",
        "claim": "object",
    },
    key=("id",),
    doc="One headline figure of a paper per row, typed once from the paper's text "
    "(src/storyflow/data/published/<paper>.csv): id (stable key), source (file, line and table of "
    "../shared/papers), corpus (storyflow's name where one matches), quantity (what the number "
    "is: hedges_g, share_exceeding, no_rate, ceeval_full, ...), setting (the condition: "
    "formulation, h, judge, corruption), group (group or contrast), model (the paper's model, or "
    "'mean' over its models), value (NaN where the claim is a direction or an order only), "
    "direction ('+'/'-' for a signed claim, or an order 'a > b'), claim (in words).",
)

REPLICATION = Table(
    "replication",
    {
        "paper": "object",
        "id": "object",
        "source": "object",
        "claim": "object",
        "corpus": "object",
        "quantity": "object",
        "setting": "object",
        "group": "object",
        "paper_model": "object",
        "published": "float64",
        "published_direction": "object",
        "claim_type": "object",
        "ours": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "ours_direction": "object",
        "n": "object",
        "models": "object",
        "validity": "object",
        "verdict": "object",
        "reason": "object",
        "ci_covers": "object",
        "note": "object",
    },
    key=("paper", "id"),
    doc="Each published figure of a paper beside ours (results/replication/<paper>.csv; "
    "docs/replication.md). published, published_direction: the paper's (PUBLISHED); claim_type: "
    "what the paper claims (effect, no effect, order, significant, none significant, value); "
    "ours: the same quantity computed the paper's way from this run (for an order, the "
    "difference of its two sides, positive when it holds; for a p-value claim, our BH-adjusted "
    "p), with its percentile bootstrap CI at stats.confidence (ci_low, ci_high; NaN where none), "
    "ours_direction ('+', '-', or the order found), n (what it rests on, in words), models (our "
    "models it rests on), validity (the verdict of the validity checks behind it: 'valid', "
    "'failed: ...', 'not checked'); verdict: agrees, disagrees, inconclusive or not judged, by "
    "the rule of docs/replication.md (from the interval, never the point estimate's sign), with "
    "its reason in words; ci_covers: 'yes', 'no' or 'n/a' (our interval holds the published "
    "value: size, apart from the verdict); note: why a figure was not computed, or what differs "
    "from the paper's setting.",
)
