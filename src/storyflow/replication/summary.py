"""The replication tables in words: per paper its tallies of independent findings (the report's
first page, a row each), one sentence on what it would take to decide its inconclusive
findings, and the cells of its headline rows with every verdict in words (its page in the
report's Replication category, :mod:`storyflow.replication.page`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.replication.context import MEAN_MODELS
from storyflow.replication.judging import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    computed,
    judged,
)
from storyflow.replication.words import number

#: The text columns of a replication table that may be empty (NaN once read back from CSV).
TEXT = (
    "ours_direction", "paper_model", "models", "n", "validity", "note", "paper_models",
    "holds_paper_models", "same_estimate_as", "small_telescopes", "to_decide",
)  # fmt: skip
#: The columns of a paper's table of rows (:func:`cells`), by key.
COLUMNS = {"figure": "figure", "published": "published", "ours": "ours", "verdict": "verdict"}


def rst_text(text: str) -> str:
    """``text`` as literal reStructuredText inside a table cell: inline markup escaped, and a
    leading bullet or enumerator ("- a", "12. b") kept from starting a list."""
    escaped = re.sub(r"([\\*`|_])", r"\\\1", str(text))
    escaped = re.sub(r"^(\d+|[a-zA-Z#])\.(\s|$)", r"\1\\.\2", escaped)
    return re.sub(r"^([-+•])(\s|$)", r"\\\1\2", escaped)


def _place(source: str) -> str:
    """``fiction_flows.txt l. 309 (Table A1)`` as ``Table A1, l. 309``."""
    line = source.split(" ", 1)[1].split(" (")[0] if " " in source else source
    where = source[source.index("(") + 1 : source.rindex(")")] if "(" in source else ""
    return f"{where}, {line}" if where else line


def cells(r: Mapping[str, object], confidence: float) -> dict[str, str]:
    """One replication row as its paper's table cells (plain text, not yet escaped)."""
    value = float(r["published"])  # type: ignore[arg-type]
    model = str(r["paper_model"] or "")
    published = number(value) if math.isfinite(value) else str(r["published_direction"])
    if model and model not in MEAN_MODELS:
        published = f"{published} ({model})"
    ours_value = float(r["ours"])  # type: ignore[arg-type]
    low, high = float(r["ci_low"]), float(r["ci_high"])  # type: ignore[arg-type]
    if r["claim_type"] == "none significant" and math.isfinite(ours_value):
        ours = str(r["ours_direction"])  # the smallest p and its covariate
    elif r["claim_type"] == "significant" and math.isfinite(ours_value):
        ours = f"p_fdr = {number(ours_value)}"
    elif math.isfinite(ours_value):
        interval = (
            f" [{number(low)}, {number(high)}]"
            if math.isfinite(low) and math.isfinite(high)
            else ""
        )
        ours = f"{number(ours_value)}{interval}"
    else:
        ours = str(r["ours_direction"] or "not computed")
    rests = ", ".join(str(x) for x in (r["models"], r["n"]) if x)
    verdict = f"{r['verdict']}: {r['reason']}"
    if r.get("paper_models"):
        published = (
            f"{published} (per model {number(float(r['paper_min']))} to "  # type: ignore[arg-type]
            f"{number(float(r['paper_max']))})"  # type: ignore[arg-type]
        )
        holds = str(r.get("holds_paper_models") or "")
        if holds == "none":
            verdict += "; it holds none of the paper's per-model values"
        elif holds:
            verdict += f"; it holds the paper's {holds}"
    if r.get("same_estimate_as"):
        verdict += f" (the same estimate as {r['same_estimate_as']})"
    return {
        "figure": f"{r['id']} ({_place(str(r['source']))})",
        "published": published,
        "ours": f"{ours} ({rests})" if rests else ours,
        "verdict": verdict,
    }


def findings(frame: pd.DataFrame) -> pd.DataFrame:
    """The judged rows, each of our estimates once (a row that re-uses an earlier row's
    estimate, ``same_estimate_as``, is the same finding: §5.1's mean is Table A1's)."""
    rows = frame[judged(frame)]
    return rows[
        rows["same_estimate_as"].fillna("").eq("") | ~rows["same_estimate_as"].isin(rows["id"])
    ]


@dataclass(frozen=True)
class Tally:
    """One paper's counts: published figures, those computed, those judged, the independent
    findings among them (:func:`findings`) by verdict, and the computed rows not judged (of
    which ``failed`` rest on a model or a contrast that failed its validity check)."""

    figures: int
    computed: int
    judged: int
    findings: int
    agrees: int
    disagrees: int
    inconclusive: int
    not_judged: int
    failed: int


def counts(frame: pd.DataFrame) -> Tally:
    """The :class:`Tally` of one paper's replication table."""
    done = computed(frame)
    distinct = findings(frame)
    verdicts = distinct["verdict"].value_counts()
    unjudged = frame[done & ~judged(frame)]
    return Tally(
        figures=len(frame),
        computed=int(done.sum()),
        judged=int(judged(frame).sum()),
        findings=len(distinct),
        agrees=int(verdicts.get(AGREES, 0)),
        disagrees=int(verdicts.get(DISAGREES, 0)),
        inconclusive=int(verdicts.get(INCONCLUSIVE, 0)),
        not_judged=len(unjudged),
        failed=int(unjudged["failed"].sum()),
    )


def tally(frame: pd.DataFrame) -> str:
    """How many rows were computed and judged, how many independent findings those are, and
    the verdicts of the findings."""
    n = counts(frame)
    left = (
        f"; {n.not_judged} computed but not judged ({n.failed} on a failed check)"
        if n.not_judged
        else ""
    )
    return (
        f"{n.computed} of {n.figures} published figures computed, {n.judged} judged, "
        f"{n.findings} independent findings: {AGREES} {n.agrees}, {DISAGREES} {n.disagrees}, "
        f"{INCONCLUSIVE} {n.inconclusive}{left}"
    )


def _hours(hours: float) -> str:
    """Hours as a reader takes them in: minutes below an hour, one decimal below ten hours."""
    if hours < 1:
        return f"{hours * 60:.0f} min"
    return f"{hours:.1f} h" if hours < 10 else f"{hours:,.0f} h"


@dataclass(frozen=True)
class Undecided:
    """What it would take to decide one paper's inconclusive findings (docs/replication.md,
    "What it would take to decide"): of its ``open`` inconclusive findings, ``sized`` are
    decided by more units of the same kind, ``low`` to ``high`` (``median``) ``units`` per group
    at our estimates and spread; the largest of them, ``largest``, costs ``tokens`` NLL tokens,
    ``hours`` (here, on one GPU) at the run's rates (None when not priced); ``beyond`` more
    need more units than their corpus holds (``beyond_corpus``; at most ``available`` per
    group); ``telescopes``: of the judged effect findings with a d33, how many our interval
    excludes d33 for, and how many there are (None without one)."""

    open: int
    sized: int
    low: float
    high: float
    median: float
    units: str
    largest: str
    tokens: float | None
    hours: tuple[float, float] | None
    telescopes: tuple[int, int] | None
    beyond: int = 0
    available: float = math.nan

    def _span(self) -> str:
        same = self.low == self.high
        return f"{self.low:,.0f}" if same else f"{self.low:,.0f} to {self.high:,.0f}"

    def _cost(self) -> str:
        """The largest's NLL hours here and on one GPU ('' when not priced)."""
        if not self.hours:
            return ""
        return f"{_hours(self.hours[0])} here, {_hours(self.hours[1])} on one GPU"

    def sentence(self) -> str:
        """The whole sentence (a paper's page)."""
        parts = []
        if self.sized:
            parts.append(
                f"deciding {self.sized} of its {self.open} inconclusive findings takes "
                f"{self._span()} {self.units} per group at our estimates (median "
                f"{self.median:,.0f})"
            )
        if self.tokens is not None:
            cost = f": {self._cost()}" if self.hours else ""
            parts.append(
                f"the largest, {self.largest}, is {self.tokens / 1e6:,.1f} million NLL tokens{cost}"
            )
        if self.beyond:
            parts.append(
                f"{self.beyond} not decidable in this corpus (more than the {self.available:,.0f} "
                f"{self.units} per group it holds)"
            )
        if self.open > self.sized + self.beyond:
            parts.append(
                f"{self.open - self.sized - self.beyond} that no larger sample of the same kind "
                "decides"
            )
        if self.telescopes:
            parts.append(
                f"small telescopes: {self.telescopes[0]} of {self.telescopes[1]} effect findings "
                "exclude d33"
            )
        text = "; ".join(parts)
        return text[0].upper() + text[1:] + "."

    def brief(self) -> str:
        """The same in a few words (the report's first page): units per group and the largest's
        hours, the findings no larger sample decides, d33 excluded."""
        parts = []
        if self.sized:
            parts.append(f"{self.sized} of {self.open}, {self._span()} {self.units}")
            if self.hours:
                parts[-1] += f" ({_hours(self.hours[0])}, {_hours(self.hours[1])})"
        if self.beyond:
            parts.append(f"{self.beyond} beyond the corpus")
        if self.open > self.sized + self.beyond:
            parts.append(f"{self.open - self.sized - self.beyond} by no larger sample")
        if self.telescopes:
            parts.append(f"d33 excluded by {self.telescopes[0]} of {self.telescopes[1]}")
        return ", ".join(parts)


def undecided(frame: pd.DataFrame, rates: Mapping[str, Any] | None = None) -> Undecided | None:
    """The :class:`Undecided` of one paper's replication table (None when no finding is
    inconclusive). The hours are the largest finding's own (``decide_hours_cpu``,
    ``decide_hours_gpu``: each of its models at its own rate), given only when ``rates`` (the
    run's, :func:`storyflow.plan.replication.rates`) has a CPU and a GPU default."""
    distinct = findings(frame)
    open_ = distinct[distinct["verdict"].eq(INCONCLUSIVE)]
    if open_.empty:
        return None
    beyond = open_[open_["beyond_corpus"].astype(bool)]
    sized = open_[open_["n_to_decide"].notna() & ~open_["beyond_corpus"].astype(bool)]
    n = sized["n_to_decide"]
    priced = sized[sized["decide_tokens"].notna()]
    largest = priced.loc[priced["n_to_decide"].idxmax()] if len(priced) else None
    cpu, gpu = (rates or {}).get("cpu"), (rates or {}).get("gpu")
    telescopes = distinct[distinct["d33"].notna()]
    return Undecided(
        open=len(open_),
        sized=len(sized),
        low=float(n.min()) if len(n) else math.nan,
        high=float(n.max()) if len(n) else math.nan,
        median=float(n.median()) if len(n) else math.nan,
        units="/".join(sorted(set(sized["unit"]) | set(beyond["unit"]))),
        largest=str(largest["id"]) if largest is not None else "",
        tokens=float(largest["decide_tokens"]) if largest is not None else None,
        hours=(
            (float(largest["decide_hours_cpu"]), float(largest["decide_hours_gpu"]))
            if largest is not None and cpu and gpu
            else None
        ),
        telescopes=(
            (int(telescopes["excludes_d33"].sum()), len(telescopes)) if len(telescopes) else None
        ),
        beyond=len(beyond),
        available=float(beyond["available"].max()) if len(beyond) else math.nan,
    )


def undecided_sentence(frame: pd.DataFrame, rates: Mapping[str, Any] | None = None) -> str:
    """:meth:`Undecided.sentence` of the table ('' when no finding is inconclusive)."""
    found = undecided(frame, rates)
    return found.sentence() if found else ""


def headline(frame: pd.DataFrame) -> pd.DataFrame:
    """The computed rows a paper's page shows: a figure's mean over the paper's models where the
    paper gives one (its per-model rows are in the CSV), each figure once, judged rows first."""
    done = frame[computed(frame)]
    figure = ["quantity", "setting", "group"]
    has_mean = done.groupby(figure, dropna=False)["paper_model"].transform(
        lambda models: models.isin(MEAN_MODELS).any()
    )
    shown = done[~has_mean | done["paper_model"].isin(MEAN_MODELS)]
    shown = shown.drop_duplicates([*figure, "paper_model"])
    order = (~judged(shown)).astype(int)
    return shown.assign(_order=order).sort_values("_order", kind="stable").drop(columns="_order")


def text_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its empty text cells (NaN once read back from CSV) as ''."""
    return frame.assign(**{c: frame[c].astype(object).where(frame[c].notna(), "") for c in TEXT})


def summary(
    replicated: Mapping[str, pd.DataFrame],
    titles: Mapping[str, str],
    rates: Mapping[str, Any] | None = None,
) -> list[dict[str, object]]:
    """Per paper, for the report's first page: ``paper``, ``title`` (the paper's name without
    its authors), ``counts`` (the :class:`Tally` as a mapping), ``head`` (:func:`tally` and the
    table's path), ``decide`` (:func:`undecided_sentence` at ``rates``, the paper's page says
    it) and ``decide_brief`` (:meth:`Undecided.brief`, the first page's line), both '' when no
    finding is inconclusive; the texts escaped for reStructuredText."""
    out: list[dict[str, object]] = []
    for paper, frame in replicated.items():
        frame = text_columns(frame)
        found = undecided(frame, rates)
        out.append(
            {
                "paper": paper,
                "title": rst_text(titles.get(paper, paper).split(" (")[0]),
                "counts": asdict(counts(frame)),
                "head": rst_text(f"{tally(frame)} (results/replication/{paper}.csv)."),
                "decide": rst_text(found.sentence() if found else ""),
                "decide_brief": rst_text(found.brief() if found else ""),
            }
        )
    return out


def summary_of(
    paths: Mapping[str, str],
    titles: Mapping[str, str],
    rates: Mapping[str, Any] | None = None,
) -> list[dict[str, object]]:
    """:func:`summary` of the replication tables at ``paths`` (by paper) that exist; [] before
    the first run. A table an older storyflow wrote (other columns) is left out: the workflow
    reads this at parse time, for the report, and rule compare_with_paper writes it anew."""
    found = {}
    for paper, path in paths.items():
        if Path(path).is_file():
            try:
                found[paper] = tables.read(tables.REPLICATION, path)
            except tables.TableError:
                continue
    return summary(found, titles, rates) if found else []
