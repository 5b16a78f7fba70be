"""Figures of the cross-measure comparison: correlation heat maps and group-separation forests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from storyflow.figures.common import FONT_SIZE, contrast_colors, save, unique

FAILED_STYLE: dict[str, Any] = {"color": "grey", "markerfacecolor": "none", "linestyle": "--"}
"""How a result resting on a model that failed its validity check is drawn."""


def _matrix(part: pd.DataFrame, column: str, order: list[str]) -> np.ndarray:
    wide = part.pivot(index="measure_a", columns="measure_b", values=column)
    return wide.reindex(index=order, columns=order).to_numpy(float)


def plot_correlations(
    correlations: pd.DataFrame, paths: Sequence[str | Path], *, length: str, dpi: int
) -> None:
    """Per model (rows of panels): Spearman's ρ between the measures (left) and the partial ρ
    given story length (right), each cell annotated with its value; ``length``'s own row and
    column show how strongly each measure follows length. A cell that rests on a measure whose
    model failed its validity check (``valid`` false) is hatched and its value grey.

    ``correlations``: the :data:`~storyflow.tables.MEASURE_CORRELATIONS` table of one corpus.
    """
    correlations = correlations.assign(model=correlations["model"].fillna("").astype(str))
    models = unique(correlations["model"])
    measures = unique([length, *correlations["measure_a"].astype(str)])
    size = 0.45 * len(measures) + 2.6
    fig = Figure(figsize=(2 * size + 0.8, size * len(models)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(models), 2, squeeze=False)
    image = None
    for row, model in enumerate(models):
        part = correlations[correlations["model"] == model]
        for col, (column, title) in enumerate(
            [("rho", "Spearman ρ"), ("partial", f"partial ρ given {length}")]
        ):
            ax = axes[row, col]
            values = _matrix(part, column, measures)
            failed = _matrix(part.assign(bad=~part["valid"].astype(bool)), "bad", measures)
            image = ax.imshow(values, cmap="RdBu_r", vmin=-1, vmax=1)
            for (i, j), value in np.ndenumerate(values):
                bad = failed[i, j] == 1
                if bad:
                    ax.add_patch(
                        Rectangle(
                            (j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", color="grey", lw=0
                        )
                    )
                if np.isfinite(value):
                    ax.text(
                        j,
                        i,
                        f"{value:.2f}",
                        ha="center",
                        va="center",
                        fontsize=FONT_SIZE - 2,
                        color="grey" if bad else "black",
                    )
            ax.set_xticks(range(len(measures)))
            ax.set_yticks(range(len(measures)))
            ax.set_xticklabels(measures, rotation=60, ha="right", fontsize=FONT_SIZE - 1)
            ax.set_yticklabels(measures, fontsize=FONT_SIZE - 1)
            label = f"model: {model}" if model else "no model"
            if (~part["valid"].astype(bool)).any():
                label += "; hatched: a model failed its validity check"
            ax.set_title(f"{title} ({label})", fontsize=FONT_SIZE)
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.5, label="ρ")
    save(fig, paths, dpi)


def plot_separation(separation: pd.DataFrame, paths: Sequence[str | Path], *, dpi: int) -> None:
    """One forest plot per contrast: Hedges' g with its CI for every measure (rows), one marker
    per model (a measure that depends on no model has one marker). g > 0: group a scores higher.
    A measure resting on a model that failed its validity check (``valid`` false) is drawn
    hollow and grey, named in the legend; an untested contrast (a group below
    ``stats.min_group_size``) has no marker.

    ``separation``: the :data:`~storyflow.tables.MEASURE_SEPARATION` table of one corpus.
    """
    separation = separation.assign(model=separation["model"].fillna("").astype(str))
    contrasts = unique(separation["contrast"].astype(str))
    measures = sorted(unique(separation["measure"].astype(str)))
    models = unique(separation["model"])
    colors = contrast_colors(models)
    columns = min(3, max(1, len(contrasts)))
    rows = int(np.ceil(len(contrasts) / columns)) if contrasts else 1
    height = 0.28 * len(measures) + 1.2
    fig = Figure(figsize=(3.6 * columns + 1.6, height * rows + 0.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, columns, squeeze=False, sharey=True)
    offsets = np.linspace(-0.25, 0.25, len(models)) if len(models) > 1 else np.zeros(1)
    for ax, contrast in zip(axes.ravel(), contrasts, strict=False):
        part = separation[separation["contrast"] == contrast]
        for offset, model in zip(offsets, models, strict=True):
            rows_m = part[part["model"] == model].set_index("measure").reindex(measures)
            _draw_model_effects(ax, rows_m, np.arange(len(measures)) + offset, model, colors)
        ax.axvline(0, color="grey", linewidth=0.8)
        first = part.iloc[0]
        ax.set_title(f"{first['group_a']} vs {first['group_b']}", fontsize=FONT_SIZE)
        ax.set_xlabel("Hedges' g (a − b)", fontsize=FONT_SIZE)
        ax.tick_params(labelsize=FONT_SIZE - 1)
    for ax in axes.ravel()[len(contrasts) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_yticks(range(len(measures)))
        ax.set_yticklabels(measures, fontsize=FONT_SIZE - 1)
    axes[0, 0].invert_yaxis()  # the axes share y: once inverts them all
    if not contrasts:
        axes[0, 0].text(0.5, 0.5, "no contrast declared for this corpus", ha="center")
    handles, labels = _legend_entries(axes)
    if handles:
        fig.legend(
            handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=FONT_SIZE
        )
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    save(fig, paths, dpi)


def _draw_model_effects(
    ax: Axes, rows_m: pd.DataFrame, y: np.ndarray, model: str, colors: Mapping[str, Any]
) -> None:
    """One model's markers in a contrast's forest: Hedges' g with its CI for each measure
    (``rows_m``, one row per measure, at heights ``y``) that has one; hollow and grey where the
    measure rests on a model that failed its validity check."""
    ok = rows_m["g"].notna().to_numpy()
    valid = rows_m["valid"].fillna(True).astype(bool).to_numpy()
    styles: list[tuple[np.ndarray, dict[str, Any]]] = [
        (ok & valid, {}),
        (ok & ~valid, FAILED_STYLE),
    ]
    for keep, style in styles:
        if not keep.any():
            continue
        g = rows_m["g"].to_numpy(float)[keep]
        ax.errorbar(
            g,
            y[keep],
            xerr=np.abs(rows_m[["g_low", "g_high"]].to_numpy(float)[keep].T - g),
            fmt="o",
            markersize=3,
            linewidth=1,
            **({"color": colors[model]} | style),
            label=(model or "no model") + (" (failed its validity check)" if style else ""),
        )


def _legend_entries(axes: np.ndarray) -> tuple[list[Any], list[str]]:
    """The panels' legend handles and labels, each label once, in the order first seen."""
    handles: list[Any] = []
    labels: list[str] = []
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    return handles, labels
