"""The answer to a corpus's contrasts as a forest plot (:data:`storyflow.tables.CONTRAST_ANSWERS`).

One panel per formulation; one line per contrast, design and model, then the contrast's mean
over the models (a diamond, where there are several): the effect size of group a minus group b
(each model's median over h = 1..H: g, g_av for matched blocks; the adjusted coefficient b_std
of the story's mean over h) with its interval,
coloured by the answer read from it; the equivalence band (±band) shaded and 0 dashed. A line
that is not tested is grey and hollow; the headline's label is bold. The full-history rows are
in the table, not drawn. Sequentiality's rows only: the other measures' rows of the table are
the comparison's separation, drawn in its own figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from storyflow.contrast_answers.words import (
    DIFFERENCE,
    INCONCLUSIVE,
    MATCHED,
    MEAN,
    MEASURE,
    NO_DIFFERENCE,
    NOT_TESTED,
    SMALLER,
    UNMATCHED,
)
from storyflow.figures.common import FONT_SIZE, save, unique

ANSWER_COLORS = {
    DIFFERENCE: "#d73027",
    SMALLER: "#f46d43",
    NO_DIFFERENCE: "#4575b4",
    INCONCLUSIVE: "#fdae61",
    NOT_TESTED: "grey",
}
ROW_HEIGHT = 0.24  # inches per line
PANEL_WIDTH = 3.4  # inches


Line = tuple[str, str, str, str]
"""(contrast, design, model, label) of one line."""


def _lines(table: pd.DataFrame) -> list[Line]:
    """Every line, top to bottom: each contrast's designs (matched first), each with its models
    and then their mean."""
    lines = []
    for contrast in unique(table["contrast"]):
        part = table[table["contrast"] == contrast]
        first = part.iloc[0]
        models = [m for m in unique(part["model"]) if m != MEAN]
        means = [MEAN] if MEAN in set(part["model"]) else []
        for design in sorted(unique(part["design"]), key=lambda d: d != MATCHED):
            drawn = set(part.loc[part["design"] == design, "model"])
            for model in [m for m in [*models, *means] if m in drawn]:
                label = "mean of models" if model == MEAN else model
                how = f" ({design})" if design != UNMATCHED else ""
                pair = f"{first['group_a']} vs {first['group_b']}{how}"
                lines.append((contrast, design, model, f"{pair}: {label}"))
    return lines


def _panel(ax: Axes, part: pd.DataFrame, lines: Sequence[Line], band: float) -> None:
    """One formulation's lines on ``ax`` (y = line index from the top)."""
    ax.axvspan(-band, band, color="0.9", zorder=0, label=f"±{band:g} (band)")
    ax.axvline(0, color="0.4", linestyle="--", linewidth=0.8, zorder=1)
    by_line = part.set_index(["contrast", "design", "model"])
    for y, (contrast, design, model, _) in enumerate(lines):
        if (contrast, design, model) not in by_line.index:
            continue
        row = by_line.loc[(contrast, design, model)]
        color = ANSWER_COLORS.get(str(row["answer"]), "grey")
        low, high, g = float(row["ci_low"]), float(row["ci_high"]), float(row["g"])
        if math.isfinite(low) and math.isfinite(high):
            ax.plot([low, high], [y, y], color=color, linewidth=1.6, zorder=2)
        if math.isfinite(g):
            mean, hollow = model == MEAN, row["answer"] == NOT_TESTED
            ax.plot(
                [g], [y], marker="D" if mean else "o", markersize=6 if mean else 4, color=color,
                markerfacecolor="white" if hollow else color, zorder=3,
            )  # fmt: skip


def plot_contrast_answers(
    table: pd.DataFrame, paths: Sequence[str | Path], *, corpus: str, dpi: int
) -> None:
    """Draw one corpus's contrast answers (see the module docstring) and save to ``paths``;
    a table without rows gives a figure that says so."""
    table = table[(table["measure"] == MEASURE) & (table["histories"] != "full")]
    formulations = unique(table["formulation"]) or ["(none)"]
    lines = _lines(table)
    height = 1.6 + ROW_HEIGHT * max(len(lines), 1)
    fig = Figure(figsize=(2.6 + PANEL_WIDTH * len(formulations), height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(formulations), sharey=True, squeeze=False)[0]
    band = float(table["band"].iloc[0]) if len(table) else 0.0
    for ax, formulation in zip(axes, formulations, strict=True):
        _panel(ax, table[table["formulation"] == formulation], lines, band)
        ax.set_title(f"formulation: {formulation}", fontsize=FONT_SIZE + 1)
        ax.set_xlabel("effect size (g, g_av, b_std), a − b\n(over h = 1..H; mean of models: ◆)")
        ax.tick_params(labelsize=FONT_SIZE)
    axes[0].set_yticks(range(len(lines)), [line[3] for line in lines], fontsize=FONT_SIZE)
    headline = set(table.loc[table["headline"], ["contrast", "design", "model"]].itertuples(None))
    for tick, line in zip(axes[0].get_yticklabels(), lines, strict=True):
        if line[:3] in headline:
            tick.set_fontweight("bold")
    axes[0].set_ylim(len(lines) - 0.5, -0.5)
    if not lines:
        axes[0].text(0.5, 0.5, "no contrast tested", ha="center", transform=axes[0].transAxes)
    shown = [a for a in ANSWER_COLORS if a in set(table["answer"])]
    handles = [
        axes[0].plot([], [], color=ANSWER_COLORS[a], marker="o", linestyle="-")[0] for a in shown
    ]
    if handles:
        fig.legend(handles, shown, loc="outside lower center", ncols=len(shown), fontsize=FONT_SIZE)
    level = f"{100 * float(table['confidence'].iloc[0]):g}% intervals, " if len(table) else ""
    fig.suptitle(
        f"{corpus}: is there a difference? ({level}band ±{band:g} shaded)", fontsize=FONT_SIZE + 2
    )
    save(fig, paths, dpi)
