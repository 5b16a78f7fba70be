"""The validity check of the sequentiality contrasts: are both groups big enough to test?"""

from __future__ import annotations

import math

import pandas as pd

from storyflow import validity

#: Its name in the validity table.
MEASURE = "sequentiality"


def contrast_checks(effects: pd.DataFrame, corpus: str, minimum: int) -> pd.DataFrame:
    """Validity rows of a corpus's sequentiality contrasts (measure ``sequentiality``, role
    ``contrast``, model = the contrast's name, check ``min_group_size``): the smaller group's
    stories against ``minimum``, from :data:`storyflow.tables.EFFECTS` (largest sizes over the
    table's cells)."""
    rows = []
    for name, group in effects.groupby("contrast", sort=False):
        n_a, n_b = int(group["n_a"].max()), int(group["n_b"].max())
        rows.append(
            validity.check(
                measure=MEASURE,
                corpus=corpus,
                role="contrast",
                model=str(name),
                name="min_group_size",
                value=float(min(n_a, n_b)),
                ci=(math.nan, math.nan),
                threshold=float(minimum),
                rule=validity.RULES[0],
                n=n_a + n_b,
                detail=(
                    f"{group['group_a'].iloc[0]} ({n_a}) vs {group['group_b'].iloc[0]} ({n_b}) "
                    "stories; a smaller group is reported but not tested"
                ),
            )
        )
    return validity.frame(rows)
