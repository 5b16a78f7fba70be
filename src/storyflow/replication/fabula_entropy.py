"""Fabula Entropy Indexing (Castricato et al.) beside ours: are corrupted stories read with more
entropy than their originals?

The paper gives its results as figures only (fabula_entropy_indexing.txt l. 215-223): for ETC
(Plotto stories with a span of plot points shuffled) and for EWC (short stories with adjectives
and adverbs swapped for antonyms) the corrupted versions have the higher mean index. Ours is the
headline row of ``results/<corpus>/fabula_entropy/tables/comparison.csv`` (the headline index
over the headline pool of readers, ``headline`` true): the paired difference corrupted - original
(bits) with its bootstrap CI, for ETC the ``shuffle`` version, for EWC one antonym swap per
segment (``antonym_k1``, the mildest corruption), read on the first corpus of :data:`CORPORA`
that the run scores with that kind; the note gives the other corpora's and versions'. The
discussion's two observations are read on the story indices
(``results/<corpus>/fabula_entropy/story_indices.parquet``, headline pool and measure): the
spread of the originals' indices against the corrupted versions' (standard deviations over
stories, paired by story) and, on a corpus read with both kinds, the originals' mean ETC against
their mean EWC; both with percentile bootstrap intervals over stories (``storyflow.bootstrap``,
the run's ``stats.confidence``, ``stats.resamples`` and ``stats.seed``). Counts of the paper's
own study and its outlined follow-up have no counterpart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from storyflow import bootstrap, tables
from storyflow.replication.judging import Ours

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
        units=float(hit["n"]),
    )


def _interval(
    samples: tuple[np.ndarray, ...], statistic: Any, paired: bool, settings: Mapping[str, Any]
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over stories (the run's stats settings);
    NaN, NaN with fewer than 3 stories in a sample."""
    return bootstrap.interval(
        samples,
        statistic,
        paired=paired,
        confidence=float(settings["confidence"]),
        resamples=int(settings["resamples"]),
        seed=int(settings["seed"]),
        min_size=3,
    )


def _headline_values(
    indices: pd.DataFrame, comparison: pd.DataFrame, kind: str
) -> tuple[pd.DataFrame, str, pd.Series] | None:
    """The story indices of ``kind`` on the comparison's headline pool, the headline measure
    and that pool's comparison row of the kind's corrupted version (None when not read)."""
    rows = _headline(comparison, kind)
    chosen = rows[rows["condition"] == CONDITION[kind]]
    if chosen.empty:
        return None
    hit = chosen.iloc[0]
    mine = indices[(indices["pool"] == hit["pool"]) & (indices["kind"] == kind)]
    return mine, str(hit["measure"]), hit


def _spread(
    comparisons: Mapping[str, pd.DataFrame],
    indices: Mapping[str, pd.DataFrame],
    settings: Mapping[str, Any],
) -> Ours:
    """Originals' spread of story indices minus the corrupted versions' (standard deviations
    over the stories read in both, bits), on the first kind and corpus read: given, not judged
    (the paper's observation pools both kinds over its own stories and readers)."""
    for kind in CORPORA:
        for corpus in CORPORA[kind]:
            if corpus not in comparisons or corpus not in indices:
                continue
            found = _headline_values(indices[corpus], comparisons[corpus], kind)
            if found is None:
                continue
            mine, measure, hit = found
            wide = mine.pivot_table(index="story_id", columns="condition", values=measure)
            if "original" not in wide or CONDITION[kind] not in wide:
                continue
            both = wide[["original", CONDITION[kind]]].dropna()
            original, corrupted = (both[c].to_numpy(float) for c in both.columns)

            def difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
                return np.std(a, ddof=1, axis=axis) - np.std(b, ddof=1, axis=axis)

            value = float(difference(original, corrupted)) if len(both) > 1 else math.nan
            return Ours(
                value,
                _interval((original, corrupted), difference, True, settings),
                ORIGINAL_HIGHER if value > 0 else CORRUPTED_HIGHER if value < 0 else "",
                f"{len(both)} stories read in both versions",
                str(hit["readers"]),
                "valid" if bool(hit["valid"]) else "failed: a reader failed its validity check",
                f"{corpus}, {kind.upper()}, original vs {CONDITION[kind]}, {measure} index: "
                f"SD {np.std(original, ddof=1):.3f} vs {np.std(corrupted, ddof=1):.3f} bits "
                "(the paper's observation covers ETC and EWC together)",
                False,
                incomparable=(
                    "the paper's observation pools ETC and EWC over its own stories read by "
                    f"people; ours is {kind.upper()} alone on {corpus}, read by {hit['readers']}"
                ),
                units=float(len(both)),
            )
    return Ours.missing("no corpus is read with a corrupted version in this run")


def _etc_above_ewc(
    comparisons: Mapping[str, pd.DataFrame],
    indices: Mapping[str, pd.DataFrame],
    settings: Mapping[str, Any],
) -> Ours:
    """Mean ETC of the original stories minus their mean EWC (bits), on a corpus read with
    both kinds."""
    for corpus, comparison in comparisons.items():
        if corpus not in indices:
            continue
        etc = _headline_values(indices[corpus], comparison, "etc")
        ewc = _headline_values(indices[corpus], comparison, "ewc")
        if etc is None or ewc is None:
            continue
        values = []
        for mine, measure, _ in (etc, ewc):
            original = mine[mine["condition"] == "original"]
            values.append(original.groupby("story_id")[measure].mean().dropna().to_numpy(float))

        def difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
            return np.mean(a, axis=axis) - np.mean(b, axis=axis)

        value = float(difference(*values)) if min(len(v) for v in values) else math.nan
        valid = bool(etc[2]["valid"]) and bool(ewc[2]["valid"])
        return Ours(
            value,
            _interval(tuple(values), difference, False, settings),
            "etc > ewc" if value > 0 else "ewc > etc" if value < 0 else "",
            f"{len(values[0])} stories read for ETC, {len(values[1])} for EWC",
            str(etc[2]["readers"]),
            "valid" if valid else "failed: a reader failed its validity check",
            f"{corpus}, the same stories read with both kinds, {etc[1]} index (the paper's ETC "
            "and EWC stories differ)",
            False,
            units=float(min(len(v) for v in values)),
        )
    return Ours.missing("no corpus is read with both ETC and EWC in this run")


def ours(
    published: pd.DataFrame, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> dict[str, Ours]:
    """Our figure for every published Fabula Entropy Indexing row, by id (see the module
    docstring)."""
    comparisons = {
        name.removesuffix("_comparison"): tables.read(tables.FEI_COMPARISON, paths[0])
        for name, paths in files.items()
        if name.endswith("_comparison")
    }
    indices = {
        name.removesuffix("_indices"): tables.read(tables.FEI_STORY_INDICES, paths[0])
        for name, paths in files.items()
        if name.endswith("_indices")
    }
    found: dict[str, Ours] = {}
    for row in published.to_dict("records"):
        if row["quantity"] in CORPORA and row["direction"] == CORRUPTED_HIGHER:
            found[row["id"]] = _direction(row, comparisons)
        elif row["quantity"] == "spread_of_story_entropies":
            found[row["id"]] = _spread(comparisons, indices, settings)
        elif row["quantity"] == "mean_entropy":
            found[row["id"]] = _etc_above_ewc(comparisons, indices, settings)
        elif str(row["id"]).startswith("O."):
            found[row["id"]] = Ours.missing("the paper's outlined study of generated stories")
        elif str(row["id"]).startswith("N.") or row["quantity"] == "n_significance_tests":
            found[row["id"]] = Ours.missing("a count of the paper's own study")
        else:
            found[row["id"]] = Ours.missing(f"storyflow does not compute {row['quantity']}")
    return found
