"""The words and names of a contrast's answers (:mod:`storyflow.contrast_answers.answers`): the
readings of an interval, the designs and their effect sizes, and what the headline reads.

Kept apart from the code that fits the adjusted contrasts (R, through rpy2), so that the rules
that only read the answers table (its figure, page and methods sentences) import no R.
"""

from __future__ import annotations

from storyflow.replication.intervals import INCONCLUSIVE as INCONCLUSIVE

#: The answers, in the order a reader looks for them.
DIFFERENCE, NO_DIFFERENCE, SMALLER = "a difference", "no difference", "smaller than the band"
NOT_TESTED = "not tested"
ANSWERS = (DIFFERENCE, SMALLER, NO_DIFFERENCE, INCONCLUSIVE, NOT_TESTED)
#: The ``model`` of the row of the mean over the models (only where there are several).
MEAN = "mean"
#: The designs a contrast is estimated under: stories as independent draws of each group, and
#: stories matched by a shared block (the stories table's :data:`BLOCK` column).
UNMATCHED, MATCHED = "unmatched", "matched"
#: The design of the rows adjusted for length and topic closeness
#: (:mod:`storyflow.contrast_answers.adjusted`).
ADJUSTED = "adjusted"
#: The stories table's column that matches stories across groups (CSV ``columns.block``;
#: HIPPOCORPUS: the recalled story a story is paired with).
BLOCK = "block"
#: Each design's effect size: Hedges' g (pooled SD), Lakens' (2013) g_av for matched groups
#: and the adjusted rows' standardised group coefficient.
EFFECT_SIZE = {UNMATCHED: "g", MATCHED: "g_av", ADJUSTED: "b_std"}
#: The formulation a contrast's headline reads (docs/method.md, "The headline of a contrast").
HEADLINE_FORMULATION = "context"
#: The story measure compared (story sequentiality, nats/token) and how each model's g values
#: over h become one number (the paper's Tables A1, A4, A7).
MEASURE, OVER_HISTORIES = "seq", "median"
