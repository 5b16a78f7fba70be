"""Narrative sense (Roemmele et al.) beside ours: the share of human-written stories above the
narrative-sense threshold, the order of human and generated stories, and the PMI table.

The paper scores WritingPrompts stories: the human story of each test prompt and four
generators' stories for it (narrative_sense_pmi.txt, Table 4). HANNA is the nearest corpus
storyflow has: WritingPrompts prompts with their human story and six other LLMs' stories. So the
human share is compared directly (a Wilson interval over the tested stories), the order "human
above every generator" is read over HANNA's six LLMs as the margin of the human share over the
highest LLM share, with a percentile bootstrap interval over prompts (each prompt's seven
stories resampled together), and a row about one of the paper's generators has no counterpart.
The PMI table's figures, the seen share and the recognized lemmas depend on the reference
corpora, which differ from the paper's (the note says which): they are reported and not judged.
The seen share is the mean over stories of each story's share of seen pairs, as the paper's
printed percentages are (l. 426-427: they exceed the ratios of its printed means).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from storyflow import bootstrap
from storyflow.replication.judging import Ours
from storyflow.validity import wilson_interval

#: The paper's name of the human stories and storyflow's (HANNA) group.
HUMAN = ("HUMAN", "Human")


def _share(row: Mapping[str, Any], groups: pd.DataFrame, confidence: float) -> Ours:
    if row["group"] != HUMAN[0]:
        return Ours.missing(
            f"{row['group']} is not among HANNA's generators ({', '.join(_llms(groups))})"
        )
    human = groups[groups["group"] == HUMAN[1]].iloc[0]
    n, k = int(human["n_tested"]), int(human["n_exceeding"])
    return Ours(
        k / n if n else math.nan,
        wilson_interval(k, n, confidence),
        "",
        f"{k} of {n} HANNA human stories tested ({int(human['n_excluded'])} left out)",
        "",
        "not checked",
        "HANNA's human WritingPrompts stories, not the paper's test set",
        False,
        units=float(n),
    )


def _llms(groups: pd.DataFrame) -> list[str]:
    return [g for g in groups["group"] if g != HUMAN[1]]


def _margins(exceeds: np.ndarray, human: int) -> np.ndarray:
    """Human share minus the highest other share, per row of ``exceeds`` [..., prompts,
    groups] (1 exceeds, 0 does not, NaN untested); shares over the tested stories."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample without a tested story
        shares = np.nanmean(exceeds, axis=-2)
        others = np.delete(shares, human, axis=-1)
        return shares[..., human] - np.nanmax(others, axis=-1)


def _order(
    row: Mapping[str, Any], groups: pd.DataFrame, scores: pd.DataFrame, settings: Mapping[str, Any]
) -> Ours:
    if row["direction"] != "human > every model":
        return Ours.missing("an order among the paper's generators, which HANNA does not have")
    tested = scores.assign(
        prompt=scores["story_id"].astype(str).str.rsplit("-", n=1).str[-1],
        exceeds=scores["exceeds"].astype(float).where(scores["p_value"].notna()),
    )
    wide = tested.pivot_table(
        index="prompt", columns="group", values="exceeds", aggfunc="first", dropna=False
    )
    names = list(wide.columns)
    human = names.index(HUMAN[1])
    x = wide.to_numpy(float)
    margin = float(_margins(x, human))
    ci = bootstrap.units_interval(  # prompts resampled, each with its stories of every group
        list(x),
        lambda rows: float(_margins(np.array(rows), human)),
        confidence=float(settings["confidence"]),
        resamples=int(settings["resamples"]),
        seed=int(settings["seed"]),
    )
    share = groups.set_index("group")["share_exceeding"]
    above = [g for g in _llms(groups) if share[g] >= share[HUMAN[1]]]
    found = "human > every model" if not above else f"{', '.join(above)} >= human"
    return Ours(
        margin, ci, found,
        f"{len(x)} HANNA prompts, {len(groups)} groups of {int(groups['n_tested'].min())}-"
        f"{int(groups['n_tested'].max())} tested stories",
        "", "not checked",
        "ours: the human share minus the highest LLM share, bootstrap over prompts; shares: "
        + ", ".join(f"{g} {share[g]:.3f}" for g in share.index), False, units=float(len(x)),
    )  # fmt: skip


def _human_stories(row: Mapping[str, Any], scores: pd.DataFrame) -> Ours:
    if row["group"] != HUMAN[0]:
        return Ours.missing(f"{row['group']} is not among HANNA's generators")
    human = scores[(scores["group"] == HUMAN[1]) & scores["included"].astype(bool)]
    column = {"seen_share": "seen_share", "mean_recognized_lemmas": "n_lemmas"}[row["quantity"]]
    values = human[column].dropna().to_numpy(float)
    return Ours(
        float(values.mean()) if len(values) else math.nan, (math.nan, math.nan), "",
        f"{len(values)} HANNA human stories", "", "not checked",
        "mean over stories, as the paper's (l. 426-427)", False,
        incomparable="a pair is seen when storyflow's PMI table holds it, and that table's "
        "reference corpora are not the paper's",
    )  # fmt: skip


def _pmi_table(row: Mapping[str, Any], pairs: pd.DataFrame, reference: str) -> Ours:
    pmi = pairs["pmi"].to_numpy(float)
    value = {
        "pmi_min": lambda: float(pmi.min()),
        "pmi_median": lambda: float(np.median(pmi)),
        "n_pairs": lambda: float(len(pmi)),
    }[row["quantity"]]()
    return Ours(
        value, (math.nan, math.nan), "", f"{len(pmi)} pairs", "", "not checked",
        f"storyflow's reference corpora: {reference} (the paper's: ROCStories, VIST, CMU plot "
        "summaries, Children's Book Test)", False,
        incomparable="the table's figures are properties of its reference corpora",
    )  # fmt: skip


def ours(
    published: pd.DataFrame, files: Mapping[str, Sequence[str]], settings: Mapping[str, Any]
) -> dict[str, Ours]:
    """Our figure for every published narrative-sense row, by id (see the module docstring)."""
    groups = pd.read_csv(files["hanna_table"][0]) if "hanna_table" in files else None
    scores = pd.read_parquet(files["hanna_scores"][0]) if "hanna_scores" in files else None
    pairs = pd.read_parquet(files["pmi"][0], columns=["pmi"]) if "pmi" in files else None
    found: dict[str, Ours] = {}
    for row in published.to_dict("records"):
        quantity = row["quantity"]
        if quantity in ("pmi_min", "pmi_median", "n_pairs"):
            found[row["id"]] = (
                _pmi_table(row, pairs, ", ".join(settings["reference"]))
                if pairs is not None
                else Ours.missing("the PMI table is not made in this run")
            )
        elif groups is None or scores is None:
            found[row["id"]] = Ours.missing("narrative sense does not score HANNA in this run")
        elif quantity == "share_exceeding" and not str(row["direction"]):
            found[row["id"]] = _share(row, groups, settings["confidence"])
        elif quantity == "share_exceeding":
            found[row["id"]] = _order(row, groups, scores, settings)
        elif quantity in ("seen_share", "mean_recognized_lemmas"):
            found[row["id"]] = _human_stories(row, scores)
        else:
            found[row["id"]] = Ours.missing(
                f"{quantity} depends on the reference corpora's size (PMI without ln N), "
                "which are not the paper's"
                if quantity.startswith("median_pmi")
                else f"storyflow does not compute {quantity} of the paper's corpus"
            )
    return found
