"""Fabula Entropy Indexing (Castricato et al.) beside ours: are corrupted stories read with more
entropy than their originals?

The paper gives its results as figures only (fabula_entropy_indexing.txt l. 215-223): for ETC
(Plotto stories with a span of plot points shuffled) and for EWC (short stories with adjectives
and adverbs swapped for antonyms) the corrupted versions have the higher mean index. Ours is the
headline row of ``results/<corpus>/fabula_entropy/tables/comparison.csv`` (the headline index
over the headline pool of readers, ``headline`` true): the paired difference corrupted - original
(bits) with its bootstrap CI, for ETC the ``shuffle`` version, for EWC one antonym swap per
segment (``antonym_k1``, the mildest corruption), read on the first corpus of :data:`CORPORA`
that the run scores with that kind; the note gives the other corpora's and versions'. Counts of
the paper's own study and its outlined follow-up have no counterpart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.replication.agreement import Ours

#: For each index kind, the corpora read (in order of preference) and the corrupted version.
CORPORA = {"etc": ("rocstories", "hippocorpus"), "ewc": ("books", "hanna")}
CONDITION = {"etc": "shuffle", "ewc": "antonym_k1"}
#: Published directions and storyflow's wording of them.
CORRUPTED_HIGHER, ORIGINAL_HIGHER = "corrupted > original", "original > corrupted"


def _headline(comparison: pd.DataFrame, kind: str) -> pd.DataFrame:
    rows = comparison[(comparison["kind"] == kind) & comparison["headline"].astype(bool)]
    return rows[rows["diff"].notna()]


def _direction(row: Mapping[str, Any], comparisons: Mapping[str, pd.DataFrame]) -> Ours:
    kind = str(row["quantity"])
    found = [
        (corpus, _headline(comparisons[corpus], kind))
        for corpus in CORPORA[kind]
        if corpus in comparisons and not _headline(comparisons[corpus], kind).empty
    ]
    if not found:
        return Ours.missing(f"no corpus is read for {kind.upper()} with a tested difference")
    corpus, rows = found[0]
    chosen = rows[rows["condition"] == CONDITION[kind]]
    if chosen.empty:
        return Ours.missing(f"{corpus} has no {CONDITION[kind]} version in this run")
    hit = chosen.iloc[0]
    others = [
        f"{c} {r['condition']} {r['diff']:+.3f}"
        for c, part in found
        for _, r in part.iterrows()
        if (c, r["condition"]) != (corpus, CONDITION[kind])
    ]
    note = (
        f"{corpus}, {hit['condition']}, {hit['measure']} index (bits), not the paper's stories"
        + (f"; elsewhere: {', '.join(others)}" if others else "")
        + (f"; {hit['note']}" if isinstance(hit["note"], str) and hit["note"] else "")
    )
    return Ours(
        float(hit["diff"]),
        (float(hit["diff_ci_low"]), float(hit["diff_ci_high"])),
        CORRUPTED_HIGHER if hit["diff"] > 0 else ORIGINAL_HIGHER,
        f"{int(hit['n'])} stories, {int(hit['population'])} answers per question",
        str(hit["readers"]),
        "valid" if bool(hit["valid"]) else "failed: a reader failed its validity check",
        note,
        False,
    )


def ours(
    published: pd.DataFrame, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> dict[str, Ours]:
    """Our figure for every published Fabula Entropy Indexing row, by id (see the module
    docstring)."""
    del settings
    comparisons = {
        name.removesuffix("_comparison"): tables.read(tables.FEI_COMPARISON, paths[0])
        for name, paths in files.items()
        if name.endswith("_comparison")
    }
    found: dict[str, Ours] = {}
    for row in published.to_dict("records"):
        if row["quantity"] in CORPORA and row["direction"] == CORRUPTED_HIGHER:
            found[row["id"]] = _direction(row, comparisons)
        elif str(row["id"]).startswith("O."):
            found[row["id"]] = Ours.missing("the paper's outlined study of generated stories")
        elif str(row["id"]).startswith("N.") or row["quantity"] == "n_significance_tests":
            found[row["id"]] = Ours.missing("a count of the paper's own study")
        else:
            found[row["id"]] = Ours.missing(
                f"storyflow does not compute {row['quantity']} (ETC and EWC are read on "
                "different corpora here)"
                if row["quantity"] == "mean_entropy"
                else f"storyflow does not compute {row['quantity']}"
            )
    return found
