"""A corpus's contrast answers as a page of the report's Contrasts category, and their headlines
for the report's first page.

The report shows an HTML result in a frame (a CSV result is only a link), so the answers table
(:data:`storyflow.tables.CONTRAST_ANSWERS`) is also written as one self-contained page: each
contrast's headline first in words, then its sequentiality rows (the headline in bold), with the
forest plot inlined. :func:`headlines` gives one record per contrast for the first page.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from storyflow import tables
from storyflow.contrast_answers.words import INCONCLUSIVE, MEASURE
from storyflow.replication.page import document, picture
from storyflow.replication.words import number

#: The columns of the page's table, and their headers.
COLUMNS = {
    "contrast": "contrast",
    "formulation": "formulation",
    "histories": "h",
    "design": "design",
    "model": "model",
    "estimate": "effect size [CI]",
    "answer": "answer",
    "decide": "to decide (per group)",
}


def _interval(row: Mapping[str, object]) -> str:
    """'g_av 0.31 [0.09, 0.52]': the row's effect size, value and interval."""
    g, low, high = (float(row[k]) for k in ("g", "ci_low", "ci_high"))  # type: ignore[arg-type]
    if not math.isfinite(g):
        return f"{row['effect_size']} –"
    span = f" [{number(low)}, {number(high)}]" if math.isfinite(low) else ""
    return f"{row['effect_size']} {number(g)}{span}"


def _said(value: object) -> str:
    """A label read back from CSV: '' where it was empty (read as NaN)."""
    return value if isinstance(value, str) else ""


def _answer(row: Mapping[str, object]) -> str:
    """The answer with its direction ('a difference, group a higher')."""
    direction = _said(row["direction"])
    return f"{row['answer']}, {direction}" if direction else str(row["answer"])


def _decide(row: Mapping[str, object]) -> str:
    """How many units per group would decide an inconclusive row ('' otherwise)."""
    n = float(row["n_to_decide"])  # type: ignore[arg-type]
    if row["answer"] != INCONCLUSIVE:
        return ""
    return f"{n:,.0f}" if math.isfinite(n) else "no sample at this estimate"


def headlines(table: pd.DataFrame) -> list[dict[str, str]]:
    """One record per contrast of a corpus's answers (its headline row): ``corpus``,
    ``contrast`` ('a vs b'), ``reads`` (formulation, h, design, model), ``estimate``
    (:func:`_interval`), ``answer`` (with its direction) and ``decide``."""
    shown = table[(table["measure"] == MEASURE) & table["headline"]]
    records = []
    for row in shown.to_dict("records"):
        records.append(
            {
                "corpus": str(row["corpus"]),
                "contrast": f"{row['group_a']} vs {row['group_b']}",
                "reads": f"{row['formulation']}, h {row['histories']}, {row['design']}, "
                f"{row['model']}",
                "estimate": _interval(row),
                "answer": _answer(row),
                "decide": _decide(row),
            }
        )
    return records


def headlines_of(paths: Sequence[str]) -> list[dict[str, str]]:
    """:func:`headlines` of every answers table at ``paths`` that exists ([] before the first
    run; a table an older storyflow wrote is left out). Read when the workflow is planned, for
    the report's first page: it changes no job."""
    records = []
    for path in paths:
        if Path(path).is_file():
            try:
                records += headlines(tables.read(tables.CONTRAST_ANSWERS, path))
            except (tables.TableError, KeyError):
                continue
    return records


def _table(table: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(title)}</th>" for title in COLUMNS.values())
    body = []
    for row in table.to_dict("records"):
        cell = {
            **{k: str(row[k]) for k in ("contrast", "formulation", "histories", "design")},
            "model": str(row["model"]),
            "estimate": _interval(row),
            "answer": _answer(row),
            "decide": _decide(row),
        }
        strong = ' style="font-weight:600"' if row["headline"] else ""
        body.append(
            f"<tr{strong}>" + "".join(f"<td>{html.escape(cell[k])}</td>" for k in COLUMNS) + "</tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render(table: pd.DataFrame, *, corpus: str, figure: bytes | None = None) -> str:
    """The page of one corpus's answers ``table``: each contrast's headline in words, then
    every sequentiality row (headline first, in bold), then the forest plot ``figure`` (PNG)."""
    rows = table[table["measure"] == MEASURE]
    said = "".join(
        f"<p><strong>{html.escape(h['contrast'])}: {html.escape(h['answer'])}</strong> "
        f"({html.escape(h['estimate'])}; {html.escape(h['reads'])})</p>\n"
        for h in headlines(table)
    )
    why = rows.loc[rows["headline"], "why"]
    return document(
        f"{corpus}: is there a difference between the groups?",
        said
        + (f"<p class='note'>Why: {html.escape(_said(why.iloc[0]))}.</p>\n" if len(why) else "")
        + "<p class='note'>Each answer is read from its interval against 0 and the band "
        "(docs/method.md §5.1): a difference, no difference, smaller than the band, or "
        "inconclusive, with the stories (blocks) per group that would decide it. g: Hedges' g; "
        "g_av: the matched groups' effect size; b_std: the length- and topic-adjusted group "
        f"coefficient. Every column: <code>results/{html.escape(corpus)}/sequentiality/tables/"
        "contrast_answers.csv</code>.</p>\n"
        + _table(rows)
        + "\n"
        + picture(f"{corpus}: contrast answers", figure),
    )


def write(table_path: str | Path, path: str | Path, *, corpus: str, figure: str | Path) -> None:
    """Write :func:`render` of the answers at ``table_path`` to ``path``, inlining ``figure``."""
    table = tables.read(tables.CONTRAST_ANSWERS, table_path)
    text = render(table, corpus=corpus, figure=Path(figure).read_bytes())
    Path(path).write_text(text, encoding="utf-8")
