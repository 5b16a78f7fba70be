"""The replication figure of one paper: each published figure beside ours, with our interval.

One panel per quantity (Hedges' g, a share, a rate, ...: each on its own scale), one line per
published figure: the published value as a black diamond (for a mean over the paper's models,
with a grey bar over the range of its per-model values), ours as a dot with its confidence
interval, coloured by the verdict of docs/replication.md (agrees, disagrees, inconclusive), and
hollow and grey where the row is not judged (a failed validity check, no interval, not the
paper's quantity). Only judged rows and the published values set a panel's range, so that a
row not judged with an interval to g = 36 does not squeeze the others to a dot; an interval
that leaves the range is cut at its edge with an arrow. An order or direction claim without a
value is written out with ours beside it. Figures this run did not compute (a model, a corpus or a
quantity it lacks) are not drawn: a line at the bottom counts them by reason (the table lists
each), so that a run with two small models shows its dozen comparisons, not two hundred empty
lines.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from storyflow.figures.common import FONT_SIZE, save, unique
from storyflow.replication.judging import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    NOT_JUDGED,
    computed,
    judged,
)

VERDICT_COLORS = {
    AGREES: "#1a9850",
    DISAGREES: "#d73027",
    INCONCLUSIVE: "#fdae61",
    NOT_JUDGED: "grey",
}
ROW_HEIGHT = 0.22  # inches per line
#: Quantities whose 0 is a line of no effect on their panel.
SIGNED = ("hedges_g", "difference", "coefficient")


def _range(part: pd.DataFrame, signed: bool) -> tuple[float, float] | None:
    """The x range of one panel: the published values and the judged rows' values and
    intervals (and 0 for a signed quantity), padded by 5%; None when nothing is finite."""
    mine = part[judged(part)]
    ranges = [part[c] for c in ("paper_min", "paper_max") if c in part]
    values = pd.concat(
        [part["published"], *ranges, mine["ours"], mine["ci_low"], mine["ci_high"]],
        ignore_index=True,
    ).astype(float)
    values = values[values.map(math.isfinite)]
    if signed:
        values = pd.concat([values, pd.Series([0.0])], ignore_index=True)
    if values.empty:
        return None
    low, high = float(values.min()), float(values.max())
    pad = 0.05 * (high - low) if high > low else 0.5
    return low - pad, high + pad


def _label(row: pd.Series) -> str:
    parts = [str(row["id"])]
    if row["paper_model"] and row["paper_model"] != "mean":
        parts.append(str(row["paper_model"]))
    return " · ".join(parts)


def _not_computed(missing: pd.DataFrame) -> str:
    """One line: how many published figures were not computed, and why (commonest first)."""
    if missing.empty:
        return ""
    reasons = missing["note"].replace("", "no reason given").value_counts()
    listed = "; ".join(f"{n}: {reason}" for reason, n in reasons.head(6).items())
    more = f"; {len(reasons) - 6} other reasons" if len(reasons) > 6 else ""
    return f"Not computed in this run, {len(missing)} published figures ({listed}{more})."


def plot_replication(table: pd.DataFrame, paths: Sequence[str | Path], *, dpi: int) -> None:
    """Draw :func:`replication_figure` of one paper's rows to ``paths``."""
    save(replication_figure(table), paths, dpi)


def replication_figure(table: pd.DataFrame) -> Figure:
    """The figure of :data:`storyflow.tables.REPLICATION` rows of one paper: the rows this run
    computed (a value or a direction of ours), the others counted by reason below."""
    table = table.fillna(
        {c: "" for c in ("paper_model", "validity", "note", "ours_direction", "verdict")}
    )
    paper = str(table["paper"].iloc[0]) if len(table) else ""
    done = computed(table)
    missing, table = table[~done], table[done]
    valued = table[table["published"].notna() | table["ours"].notna()]
    stated = table[table["published"].isna() & table["ours"].isna()]
    quantities = unique(valued["quantity"].astype(str))
    heights = [max(len(valued[valued["quantity"] == q]), 1) for q in quantities]
    if len(stated):
        heights.append(len(stated))
    if not heights:
        heights = [1]  # nothing computed: one empty panel that says so
    footer = textwrap.fill(_not_computed(missing), 120)
    fig = Figure(
        figsize=(
            8.5,
            max(2.5, ROW_HEIGHT * (sum(heights) + footer.count("\n") + 1) + 0.9 * len(heights)),
        ),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(heights), 1, squeeze=False, height_ratios=heights)[:, 0]
    fig.suptitle(
        f"{paper}: published (black diamond; grey bar: the paper's per-model range) and ours "
        "(dot, CI bar)\n"
        "green agrees, red disagrees, orange inconclusive, hollow grey not judged",
        fontsize=FONT_SIZE + 1,
    )
    if footer:
        fig.supxlabel(footer, fontsize=FONT_SIZE - 2, color="grey", ha="left", x=0.01)
    if table.empty:
        axes[0].set_axis_off()
        axes[0].text(0.5, 0.5, "no published figure computed in this run", ha="center",
                     va="center", fontsize=FONT_SIZE, transform=axes[0].transAxes)  # fmt: skip
    for ax, quantity in zip(axes, quantities, strict=False):
        _draw_quantity(ax, valued[valued["quantity"] == quantity].reset_index(drop=True), quantity)
    if len(stated):
        _write_directions(axes[-1], stated)
    return fig


def _draw_quantity(ax: Axes, part: pd.DataFrame, quantity: str) -> None:
    """One quantity's panel: a line per published figure of ``part`` (published value and
    ours with its interval, :func:`_draw_row`), on the range of :func:`_range`; a dotted line
    at 0 for a signed quantity."""
    span = _range(part, quantity in SIGNED)
    for y, row in part.iterrows():
        _draw_row(ax, int(y), row, span)
    if span:
        ax.set_xlim(*span)
    ax.set_yticks(range(len(part)))
    ax.set_yticklabels([_label(r) for _, r in part.iterrows()], fontsize=FONT_SIZE - 2)
    ax.set_ylim(len(part) - 0.5, -0.5)
    ax.set_title(quantity, fontsize=FONT_SIZE, loc="left")
    ax.tick_params(axis="x", labelsize=FONT_SIZE - 1)
    if quantity in SIGNED:
        ax.axvline(0, color="grey", lw=0.6, ls=":")
    ax.grid(axis="x", lw=0.3, alpha=0.5)


def _draw_row(ax: Axes, y: int, row: pd.Series, span: tuple[float, float] | None) -> None:
    """One published figure at height ``y``: ours as a dot with its interval in the verdict's
    colour (hollow when not judged; an end beyond ``span`` marked by an arrow at the edge),
    the published value as a black diamond."""
    color = VERDICT_COLORS.get(str(row["verdict"]), "grey")
    hollow = row["verdict"] == NOT_JUDGED
    low_model, high_model = (float(row.get(c, math.nan)) for c in ("paper_min", "paper_max"))
    if math.isfinite(low_model) and math.isfinite(high_model):
        ax.plot([low_model, high_model], [y, y], color="grey", lw=4, alpha=0.35,
                solid_capstyle="butt")  # fmt: skip
    if math.isfinite(row["ours"]):
        low, high = row["ci_low"], row["ci_high"]
        if math.isfinite(low) and math.isfinite(high):
            ax.plot([low, high], [y, y], color=color, lw=1.2)
            for end, edge, marker in ((low, 0, "<"), (high, 1, ">")):
                if span and ((end < span[0]) if edge == 0 else (end > span[1])):
                    ax.plot(span[edge], y, marker, color=color, ms=4, clip_on=False)
        ax.plot(
            row["ours"], y, "o", color=color, ms=4,
            markerfacecolor="none" if hollow else color,
        )  # fmt: skip
    if math.isfinite(row["published"]):
        ax.plot(row["published"], y, "D", color="black", ms=3.5)


def _write_directions(ax: Axes, stated: pd.DataFrame) -> None:
    """The last panel: each order or direction claim without a value, published and ours, in
    the verdict's colour."""
    ax.set_axis_off()
    ax.set_title("orders and directions (no value in the paper)", fontsize=FONT_SIZE, loc="left")
    for y, (_, row) in enumerate(stated.iterrows()):
        ours = row["ours_direction"]
        color = VERDICT_COLORS.get(str(row["verdict"]), "grey")
        ax.text(
            0, 1 - (y + 0.5) / len(stated),
            f"{row['id']}: published {row['published_direction']}; ours {ours}"[:140],
            fontsize=FONT_SIZE - 2, color=color, va="center", transform=ax.transAxes,
        )  # fmt: skip
