"""Does our figure agree with the published one? One row's comparison, and the summary in words.

Direction: for a signed quantity (Hedges' g, a difference, a coefficient) the sign of the value;
for an order claim ("new_yorker > llm") the order itself. Size: whether our confidence interval
covers the published value. A figure we could not compute says why, and is neither agreement
nor disagreement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from storyflow import tables

#: The answers of ``direction_agrees`` and ``ci_covers``.
YES, NO, NA = "yes", "no", "n/a"


@dataclass(frozen=True)
class Ours:
    """Our counterpart of one published figure.

    value: the same quantity computed from this run (NaN when not computed), in the published
    figure's unit; ci: its confidence interval (NaN, NaN when none); direction: '+', '-' or an
    order such as 'a > b' ('' to take the sign of ``value`` when ``signed``); n: what it rests on,
    in words; models: our models it rests on; validity: the verdict of their validity checks;
    note: why it was not computed, or how it differs from the paper's setting; signed: whether
    the sign of the value is a direction (g, a difference) or not (a share, a rate).
    """

    value: float
    ci: tuple[float, float]
    direction: str
    n: str
    models: str
    validity: str
    note: str
    signed: bool

    @classmethod
    def missing(cls, note: str, *, models: str = "", validity: str = "") -> Ours:
        """A figure this run does not give, and why."""
        return cls(math.nan, (math.nan, math.nan), "", "", models, validity, note, False)


def sign(value: float) -> str:
    """'+', '-' or '0' of a finite value; '' for NaN."""
    if not math.isfinite(value):
        return ""
    return "+" if value > 0 else "-" if value < 0 else "0"


def compare(published: Mapping[str, object], ours: Ours) -> dict[str, str]:
    """``direction_agrees``, ``ci_covers`` and ``verdict`` of one published row and ours."""
    value = float(published["value"])  # type: ignore[arg-type]
    claimed = str(published["direction"] or "") or (sign(value) if ours.signed else "")
    found = ours.direction or (sign(ours.value) if ours.signed else "")
    if not math.isfinite(ours.value) and not ours.direction:
        return {"direction_agrees": NA, "ci_covers": NA, "verdict": f"not computed: {ours.note}"}
    order = ">" in claimed or "<" in claimed
    direction = NA if not (claimed and found) else YES if claimed == found else NO
    low, high = ours.ci
    covers = NA
    if math.isfinite(value) and math.isfinite(low) and math.isfinite(high):
        covers = YES if low <= value <= high else NO
    words = []
    if direction != NA and claimed.startswith("p "):  # a claim on a p-value: it holds or not
        words.append("holds" if direction == YES else f"does not hold ({found})")
    elif direction != NA:
        words.append(
            ("same order" if direction == YES else f"a different order ({found})")
            if order
            else ("same direction" if direction == YES else "opposite direction")
        )
    if covers == YES:
        words.append("CI covers it")
    elif covers == NO:
        words.append(f"CI excludes it (ours {'higher' if ours.value > value else 'lower'})")
    elif math.isfinite(value) and math.isfinite(ours.value):
        words.append("no CI")
    return {"direction_agrees": direction, "ci_covers": covers, "verdict": ", ".join(words)}


def row(paper: str, published: Mapping[str, object], ours: Ours) -> dict[str, object]:
    """One :data:`storyflow.tables.REPLICATION` row."""
    return {
        "paper": paper,
        "id": published["id"],
        "source": published["source"],
        "claim": published["claim"],
        "corpus": published["corpus"],
        "quantity": published["quantity"],
        "setting": published["setting"],
        "group": published["group"],
        "paper_model": published["model"],
        "published": published["value"],
        "published_direction": published["direction"],
        "ours": ours.value,
        "ci_low": ours.ci[0],
        "ci_high": ours.ci[1],
        "ours_direction": ours.direction
        or (sign(ours.value) if ours.signed and math.isfinite(ours.value) else ""),
        "n": ours.n,
        "models": ours.models,
        "validity": ours.validity,
        **compare(published, ours),
        "note": ours.note,
    }


def table(paper: str, published: pd.DataFrame, ours: Mapping[str, Ours]) -> pd.DataFrame:
    """The replication table of ``paper``: every published row beside ours (``ours`` by id; a
    row without one is reported as not computed)."""
    rows = [
        row(paper, p, ours.get(str(p["id"]), Ours.missing("no counterpart in storyflow")))
        for p in published.to_dict("records")
    ]
    return tables.REPLICATION.frame(pd.DataFrame(rows, columns=tables.REPLICATION.names))


def _number(value: float) -> str:
    return f"{value:.3g}" if abs(value) >= 0.01 or value == 0 else f"{value:.2g}"


def sentence(replicated: Mapping[str, object]) -> str:
    """One replication row in words, for the report's first page."""
    r = replicated
    source = str(r["source"])  # "<file>.txt l. 309 (Table A1)"
    line = source.split(" ", 1)[1].split(" (")[0] if " " in source else source
    table = source[source.index("(") + 1 : source.rindex(")")] if "(" in source else ""
    place = f"{table} ({line})" if table else line
    setting = ", ".join(str(x) for x in (r["setting"], r["group"]) if x)
    value = float(r["published"])  # type: ignore[arg-type]
    published = (
        f"{r['paper_model']} {r['quantity']} {_number(value)}"
        if math.isfinite(value)
        else str(r["published_direction"])
    )
    ours_value = float(r["ours"])  # type: ignore[arg-type]
    if math.isfinite(ours_value):
        ci = (float(r["ci_low"]), float(r["ci_high"]))  # type: ignore[arg-type]
        interval = f" [{_number(ci[0])}, {_number(ci[1])}]" if all(map(math.isfinite, ci)) else ""
        ours = f"{_number(ours_value)}{interval}"
    else:
        ours = str(r["ours_direction"]) or "not computed"
    rests = f" on {r['models']}" if r["models"] else ""
    n = f", n = {r['n']}" if r["n"] else ""
    validity = f" ({r['validity']})" if str(r["validity"]).startswith("failed") else ""
    ours_part = f"ours {ours}{rests}{n}{validity}"
    return f"{place}, {setting}: published {published}; {ours_part}: {r['verdict']}"


def computed(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a replication table this run computed: ours has a value or a direction
    (a row without either says in ``note`` why not)."""
    return frame["ours"].notna() | frame["ours_direction"].fillna("").ne("")


#: Most rows in words per paper on the report's first page (the rest are in its table).
SUMMARY_ROWS = 8


def summary(
    replicated: Mapping[str, pd.DataFrame], titles: Mapping[str, str]
) -> list[dict[str, object]]:
    """The replication tables in words, for the report's first page: per paper a ``head`` (how
    many of its figures were computed, agree in direction and are covered by our CI) and
    ``rows``, its headline rows as sentences (:func:`sentence`): the means over the paper's
    models where it gives them, else every computed row, at most :data:`SUMMARY_ROWS`."""
    out: list[dict[str, object]] = []
    for paper, frame in replicated.items():
        frame = frame.fillna({"ours_direction": "", "paper_model": ""})
        done = frame[computed(frame)]
        agree = int((done["direction_agrees"] == YES).sum())
        directed = int(done["direction_agrees"].isin([YES, NO]).sum())
        covered = int((done["ci_covers"] == YES).sum())
        sized = int(done["ci_covers"].isin([YES, NO]).sum())
        head = (
            f"**{titles.get(paper, paper)}**: {len(done)} of {len(frame)} published figures "
            f"computed; the direction agrees for {agree} of {directed}, our CI covers the "
            f"published value for {covered} of {sized} (results/replication/{paper}.csv)."
        )
        means = done[done["paper_model"].eq("mean")]
        headline = means if len(means) else done
        rows = [sentence(r) for _, r in headline.head(SUMMARY_ROWS).iterrows()]
        if len(headline) > SUMMARY_ROWS:
            rows.append(f"... and {len(headline) - SUMMARY_ROWS} more in the table.")
        out.append({"head": head, "rows": rows})
    return out


def summary_of(paths: Mapping[str, str], titles: Mapping[str, str]) -> list[dict[str, object]]:
    """:func:`summary` of the replication tables at ``paths`` (by paper) that exist; [] before
    the first run."""
    from pathlib import Path

    found = {p: tables.read(tables.REPLICATION, f) for p, f in paths.items() if Path(f).is_file()}
    return summary(found, titles) if found else []
