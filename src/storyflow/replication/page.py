"""One paper's replication as a page of the report's Replication category: its tallies, what it
would take to decide its inconclusive findings, every computed figure beside ours with the
verdict in words (:func:`storyflow.replication.summary.cells` of its
:func:`~storyflow.replication.summary.headline` rows), the published figures not computed
counted by reason, and the paper's figure.

The report shows an HTML result in a frame that scrolls, so the page can be as long as the paper
has rows (the report's first page carries only the tallies). It is one self-contained file: the
figure is inlined as a data URI, no script, no network.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from storyflow.replication.judging import AGREES, DISAGREES, INCONCLUSIVE, computed
from storyflow.replication.summary import (
    COLUMNS,
    cells,
    headline,
    tally,
    text_columns,
    undecided_sentence,
)

#: The page's style: a readable column, the table full width, each verdict on a pale tint of its
#: colour in the figure (text contrast above 7:1 on every tint).
STYLE = """
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       margin: 0 auto; padding: 12px 20px; max-width: 1100px; }
h1 { font-size: 20px; margin: 4px 0 8px; }
p { margin: 6px 0; }
.note { color: #4b5563; font-size: 13px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 10px 0; }
th, td { border-bottom: 1px solid #e5e7eb; padding: 4px 6px; text-align: left;
         vertical-align: top; }
th { background: #f3f4f6; position: sticky; top: 0; }
td.agrees { background: #dcfce7; }
td.disagrees { background: #fee2e2; }
td.inconclusive { background: #ffedd5; }
img { max-width: 100%; height: auto; display: block; margin: 10px 0; }
"""

#: The verdicts a cell is tinted for (the others stay white).
TINTED = (AGREES, DISAGREES, INCONCLUSIVE)


def _escape(text: object) -> str:
    return html.escape(str(text))


def picture(alt: str, figure: bytes | None) -> str:
    """The PNG bytes ``figure`` inlined as an image ('' without one)."""
    if not figure:
        return ""
    data = base64.b64encode(figure).decode("ascii")
    return f'<img alt="{_escape(alt)}" src="data:image/png;base64,{data}">'


def document(title: str, body: str) -> str:
    """One self-contained page: ``title`` as its title and heading, then ``body`` (HTML)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f"<title>{_escape(title)}</title>\n"
        f"<style>{STYLE}</style></head><body>\n"
        f"<h1>{_escape(title)}</h1>\n" + body + "\n</body></html>\n"
    )


def _rows(frame: pd.DataFrame, confidence: float) -> str:
    """The table of the computed headline rows (a sentence when there is none)."""
    shown = headline(frame)
    if shown.empty:
        return (
            "<p><strong>No published figure of this paper was computed in this run</strong> "
            "(the counts below say why).</p>"
        )
    header = {**COLUMNS, "ours": f"ours [{confidence:.0%} CI] (models, n)"}
    head = "".join(f"<th>{_escape(title)}</th>" for title in header.values())
    body = []
    for row in shown.to_dict("records"):
        cell = cells(row, confidence)
        tint = f' class="{row["verdict"]}"' if row["verdict"] in TINTED else ""
        body.append(
            "<tr>"
            + "".join(f"<td>{_escape(cell[k])}</td>" for k in ("figure", "published", "ours"))
            + f"<td{tint}>{_escape(cell['verdict'])}</td></tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _not_computed(frame: pd.DataFrame) -> str:
    """The published figures this run did not compute, counted by reason."""
    missing = frame[~computed(frame)]
    if missing.empty:
        return "<p class='note'>Every published figure of the paper was computed.</p>"
    reasons = missing["note"].where(missing["note"].ne(""), "no reason given").value_counts()
    said = "; ".join(f"{n} {_escape(reason)}" for reason, n in reasons.items())
    return (
        f"<p class='note'>{len(missing)} published figure{'s' if len(missing) > 1 else ''} not "
        f"computed in this run (the CSV's <code>note</code> says why for each): {said}.</p>"
    )


def render(
    paper: str,
    frame: pd.DataFrame,
    *,
    title: str,
    confidence: float,
    rates: Mapping[str, Any] | None = None,
    figure: bytes | None = None,
    measure: str = "",
) -> str:
    """The page of ``paper``'s replication table ``frame`` (:data:`storyflow.tables.REPLICATION`
    rows): ``title`` at the top, then ``measure`` (the measure that replicates it, in words),
    intervals at ``confidence``, the cost of deciding at ``rates``
    (:func:`storyflow.replication.summary.undecided_sentence`), ``figure`` (PNG bytes) at the
    bottom."""
    frame = text_columns(frame)
    decide = undecided_sentence(frame, rates)
    return document(
        f"{title}: published results beside ours",
        (f"<p class='note'>The measure: {_escape(measure)}</p>\n" if measure else "")
        + f"<p><strong>{_escape(tally(frame))}</strong> "
        f"(<code>results/replication/{_escape(paper)}.csv</code>).</p>\n"
        + (f"<p>{_escape(decide)}</p>\n" if decide else "")
        + "<p class='note'>A verdict is read from our interval, never from the sign of our "
        "estimate: <em>agrees</em>, <em>disagrees</em>, <em>inconclusive</em> (the interval "
        "allows both), <em>not judged</em> (a failed validity check, no interval, or not the "
        "paper's quantity); a row that re-uses another row's estimate is the same finding. "
        "Units per group to decide are at our estimate and spread; d33 is the effect the "
        "original sample had 33% power to detect (docs/replication.md). A mismatch is a "
        "finding, not a setting to tune.</p>\n"
        + _rows(frame, confidence)
        + "\n"
        + _not_computed(frame)
        + "\n"
        + picture(f"{title}: published figures and ours", figure),
    )


def write(
    paper: str,
    frame: pd.DataFrame,
    path: str | Path,
    *,
    title: str,
    confidence: float,
    rates: Mapping[str, Any] | None = None,
    figure: str | Path | None = None,
    measure: str = "",
) -> None:
    """Write :func:`render` of ``paper`` to ``path``, inlining the PNG at ``figure``."""
    picture = Path(figure).read_bytes() if figure else None
    text = render(
        paper, frame, title=title, confidence=confidence, rates=rates, figure=picture,
        measure=measure,
    )  # fmt: skip
    Path(path).write_text(text, encoding="utf-8")
