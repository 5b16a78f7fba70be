"""Figures of sequentiality and effect sizes against history size.

Both figures are a grid of panels, rows = model, columns = formulation ("with topic (SEQ)",
"context only (SEQ′)"), and x = history size h = 1..H followed, after a small gap, by the full
history ("full"), which is drawn as a separate point (not joined to h = H: it is a different kind
of condition, and its size varies with the sentence's position).

- :func:`plot_sequentiality` (A): mean story-level sequentiality (nats/token) per story type with
  its confidence band (error bar at "full"), from :func:`storyflow.stats.summarize`.
- :func:`plot_effect_sizes` (B): Hedges' g of the ``seq`` measure per contrast with its
  confidence interval, from :func:`storyflow.stats.contrast_effects`.
- :func:`plot_contrast_sequentiality`: the two groups of each contrast side by side (panels per
  contrast), e.g. fiction against the non-fiction genre matched on point of view.

Rendering uses matplotlib's Agg canvas directly (no pyplot, no global figure state); every path
given is written, in the format its extension names (``.png``, ``.pdf``, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from scipy import stats as sps

from storyflow import tables
from storyflow.figures.common import (
    FONT_SIZE,
    FigureSettings,
    contrast_colors,
    save,
    story_type_colors,
    unique,
)
from storyflow.history import FULL, history_key, sort_histories

FORMULATION_TITLES = {"topic": "with topic (SEQ)", "context": "context only (SEQ′)"}
SEQ_LABEL = "sequentiality (nats/token)"
X_LABEL = "history size h (sentences)"


# Fixed colours for the story types of the built-in corpora; others take the next free colour.
def _formulations(values: Iterable[str]) -> list[str]:
    present = set(values)
    known = [f for f in FORMULATION_TITLES if f in present]
    return known + sorted(present - set(known))


def _x_positions(histories: Iterable[str]) -> dict[str, float]:
    """x of each history label: h for finite h, two steps after the largest h for "full"."""
    labels = sort_histories(histories)
    finite = [history_key(h) for h in labels if h != FULL]
    last = max(finite, default=0)
    return {h: float(last + 2 if h == FULL else history_key(h)) for h in labels}


def _grid(
    models: list[str],
    formulations: list[str],
    *,
    sharey: Literal["none", "all", "row", "col"] | bool,
    settings: FigureSettings,
    legend_rows: int,
) -> tuple[Figure, np.ndarray]:
    """Figure and a 2-D array of axes, rows = model, columns = formulation."""
    legend_height = 0.25 + 0.18 * legend_rows
    fig = Figure(
        figsize=(
            settings.width_per_panel * len(formulations),
            settings.height_per_panel * len(models) + legend_height,
        ),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(models), len(formulations), sharex=True, sharey=sharey, squeeze=False)
    for col, formulation in enumerate(formulations):
        axes[0, col].set_title(FORMULATION_TITLES.get(formulation, formulation), fontsize=9)
    for row, model in enumerate(models):
        right = axes[row, -1]
        right.annotate(
            model,
            xy=(1.04, 0.5),
            xycoords="axes fraction",
            rotation=270,
            ha="left",
            va="center",
            fontsize=FONT_SIZE + 1,
            fontweight="bold",
        )
    for ax in axes.flat:
        ax.tick_params(labelsize=FONT_SIZE)
        ax.grid(axis="y", color="0.9", linewidth=0.6)
        ax.set_axisbelow(True)
    return fig, axes


def _finish_axes(axes: np.ndarray, positions: dict[str, float], y_label: str) -> None:
    """Ticks at every history label, a gap marker before "full", axis labels on the outer panels."""
    ticks = list(positions.values())
    labels = list(positions)
    for ax in axes.flat:
        ax.set_xticks(ticks, labels)
        if FULL in positions:
            ax.axvline(positions[FULL] - 1, color="0.75", linewidth=0.6, linestyle=":")
        ax.set_xlim(min(ticks) - 0.6, max(ticks) + 0.6)
    for ax in axes[-1, :]:
        ax.set_xlabel(X_LABEL, fontsize=FONT_SIZE + 1)
    for ax in axes[:, 0]:
        ax.set_ylabel(y_label, fontsize=FONT_SIZE + 1)


def _split(df: pd.DataFrame, positions: Mapping[str, float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows of finite h (sorted by x) and the "full" rows, each with an ``x`` column."""
    df = df.assign(x=df["history"].map(positions)).sort_values("x")
    return df[df["history"] != FULL], df[df["history"] == FULL]


def _seq_rows(table: pd.DataFrame, series: str, name: str) -> pd.DataFrame:
    """The rows of ``measure == "seq"`` of the checked ``table`` (named ``name`` in the error
    when there are none), with the labels and ``series`` (the column a line stands for) as text."""
    data = table.astype({"history": str, "model": str, "formulation": str})
    data = data[data["measure"] == "seq"].astype({series: str})
    if data.empty:
        raise ValueError(f"{name} table has no rows with measure 'seq'")
    return data


#: Draws one panel: (axes, the panel's rows, x of each history label).
_PanelDrawer = Callable[[Axes, pd.DataFrame, Mapping[str, float]], None]


def _line_figure(
    data: pd.DataFrame,
    draw: _PanelDrawer,
    *,
    labels: Sequence[str],
    sharey: Literal["none", "all", "row", "col"] | bool,
    y_label: str,
    legend_title: str,
    settings: FigureSettings,
) -> Figure:
    """Figures A and B: a grid of panels (rows = model, columns = formulation), each drawn by
    ``draw``, with the figure legend of the line ``labels`` below (not yet saved)."""
    models = unique(data["model"])
    formulations = _formulations(data["formulation"])
    ncols = _legend_columns(labels, settings.width_per_panel * len(formulations))
    positions = _x_positions(data["history"])
    fig, axes = _grid(
        models,
        formulations,
        sharey=sharey,
        settings=settings,
        legend_rows=_legend_rows(labels, ncols),
    )
    for (model, formulation), panel in data.groupby(["model", "formulation"], sort=False):
        draw(axes[models.index(model), formulations.index(formulation)], panel, positions)
    _finish_axes(axes, positions, y_label)
    _figure_legend(fig, axes, labels, ncols, legend_title)
    return fig


def plot_sequentiality(
    summary: pd.DataFrame,
    paths: Sequence[str | Path],
    settings: FigureSettings,
    group_word: str = "story type",
) -> Figure:
    """Figure A: mean story-level sequentiality against history size, one line per story type.

    Args:
        summary: Output of :func:`storyflow.stats.summarize`; rows with ``measure == "seq"`` are
            drawn (mean and ``ci_low``/``ci_high``, nats/token).
        paths: Files to write (format from the extension).
        settings: The resolution of raster formats and the panel size.
        group_word: What the corpus calls its groups, in the legend's title
            (:func:`storyflow.corpora.group_word`: "group" for a CSV corpus).

    Returns:
        The figure (already saved), for inspection.
    """
    needs = [
        "model",
        "formulation",
        "history",
        "story_type",
        "measure",
        "mean",
        "ci_low",
        "ci_high",
    ]
    data = _seq_rows(tables.SUMMARY.check(summary, needs=needs), "story_type", "summary")
    types = sorted(data["story_type"].unique())
    colors = story_type_colors(types)
    offsets = _dodge(len(types), width=0.5)
    fig = _line_figure(
        data,
        lambda ax, panel, positions: _draw_type_means(ax, panel, types, colors, offsets, positions),
        labels=types,
        sharey="col",
        y_label=SEQ_LABEL,
        legend_title=f"{group_word} (mean and confidence interval)",
        settings=settings,
    )
    save(fig, paths, settings.dpi)
    return fig


def _draw_type_means(
    ax: Axes,
    panel: pd.DataFrame,
    types: Sequence[str],
    colors: Mapping[str, object],
    offsets: Sequence[float],
    positions: Mapping[str, float],
) -> None:
    """One panel of figure A: per story type, the mean (nats/token) against history size with
    its confidence band, and the full history as a dodged point with its error bar."""
    ax.axhline(0, color="0.5", linewidth=0.7, linestyle="--")
    for offset, story_type in zip(offsets, types, strict=True):
        finite, full = _split(panel[panel["story_type"] == story_type], positions)
        color = colors[story_type]
        _interval(ax, finite, color, "mean", "ci_low", "ci_high")
        ax.plot(
            finite["x"],
            finite["mean"],
            color=color,
            marker="o",
            ms=2.5,
            lw=1.2,
            label=story_type,
        )
        _error_points(ax, full, offset, color, "mean", "ci_low", "ci_high")


def _figure_legend(
    fig: Figure, axes: np.ndarray, labels: Sequence[str], ncols: int, title: str
) -> None:
    """The figure's legend below the panels: one entry per line label, in ``ncols`` columns."""
    handles = [_legend_handle(axes, label) for label in labels]
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=ncols,
        fontsize=FONT_SIZE + 1,
        frameon=False,
        title=title,
        title_fontsize=FONT_SIZE + 1,
    )


def plot_effect_sizes(
    effects: pd.DataFrame,
    paths: Sequence[str | Path],
    settings: FigureSettings,
) -> Figure:
    """Figure B: Hedges' g of sequentiality against history size, one line per contrast.

    Args:
        effects: Output of :func:`storyflow.stats.contrast_effects`; rows with
            ``measure == "seq"`` are drawn (``g`` with ``g_ci_low``/``g_ci_high``; g > 0 = the
            first-named group is more sequential). A dashed line marks g = 0. A contrast never
            ``tested`` (groups below ``stats.min_group_size``) is named in the legend with
            its group sizes and not drawn.
        paths: Files to write (format from the extension).
        settings: The resolution of raster formats and the panel size.

    Returns:
        The figure (already saved), for inspection.
    """
    needs = ["model", "formulation", "history", "contrast", "group_a", "group_b", "measure"]
    data = _seq_rows(
        tables.EFFECTS.check(effects, needs=[*needs, "g", "g_ci_low", "g_ci_high"]),
        "contrast",
        "effects",
    )
    contrasts = unique(data["contrast"])
    labels = _contrast_labels(data, contrasts)
    colors = contrast_colors(contrasts)
    offsets = _dodge(len(contrasts), width=0.45)
    fig = _line_figure(
        data,
        lambda ax, panel, positions: _draw_effects(
            ax, panel, contrasts, labels, colors, offsets, positions
        ),
        labels=labels,
        sharey=True,
        y_label="Hedges' g",
        legend_title="contrast (g > 0: first group more sequential; bars: confidence interval)",
        settings=settings,
    )
    save(fig, paths, settings.dpi)
    return fig


def _contrast_labels(data: pd.DataFrame, contrasts: Sequence[str]) -> list[str]:
    """Legend label of each contrast, "<group a> vs <group b>"; a contrast never ``tested``
    (groups below ``stats.min_group_size``) also gives its group sizes (stories)."""
    names = data.drop_duplicates("contrast").set_index("contrast")
    labels = [f"{names.at[c, 'group_a']} vs {names.at[c, 'group_b']}" for c in contrasts]
    if "tested" in data:  # groups below stats.min_group_size: named, not drawn
        for i, c in enumerate(contrasts):
            rows = data[data["contrast"] == c]
            if not rows["tested"].astype(bool).any():
                sizes = f"{rows['n_a'].max()} vs {rows['n_b'].max()} stories"
                labels[i] += f" (not tested: {sizes})"
    return labels


def _draw_effects(
    ax: Axes,
    panel: pd.DataFrame,
    contrasts: Sequence[str],
    labels: Sequence[str],
    colors: Mapping[str, object],
    offsets: Sequence[float],
    positions: Mapping[str, float],
) -> None:
    """One panel of figure B: per contrast, Hedges' g against history size (dodged by its
    offset) with error bars, the full history as a separate point; a dashed line at g = 0."""
    ax.axhline(0, color="0.3", linewidth=0.8, linestyle="--")
    for offset, contrast, label in zip(offsets, contrasts, labels, strict=True):
        finite, full = _split(panel[panel["contrast"] == contrast], positions)
        color = colors[contrast]
        ax.plot(
            finite["x"] + offset,
            finite["g"],
            color=color,
            marker="o",
            ms=2.5,
            lw=1.2,
            label=label,
        )
        _error_points(ax, finite, offset, color, "g", "g_ci_low", "g_ci_high")
        _error_points(ax, full, offset, color, "g", "g_ci_low", "g_ci_high")


def plot_contrast_sequentiality(
    effects: pd.DataFrame,
    paths: Sequence[str | Path],
    settings: FigureSettings,
    *,
    confidence: float,
) -> Figure:
    """Mean sequentiality of the two groups of each contrast against history size.

    One panel per model (rows) and contrast × formulation (columns): group a (red) and group b
    (blue) with t-based confidence bands, mean ± t_{(1+confidence)/2, n−1} · sd / sqrt(n), from
    the ``mean_a``/``sd_a``/``n_a`` columns of :func:`storyflow.stats.contrast_effects`
    (``measure == "seq"``, nats/token). For the book genres this is fiction against the
    non-fiction genre matched on point of view.
    """
    needs = ["model", "formulation", "history", "contrast", "group_a", "group_b", "measure"]
    needs += ["mean_a", "mean_b", "sd_a", "sd_b", "n_a", "n_b"]
    data = _seq_rows(tables.EFFECTS.check(effects, needs=needs), "contrast", "effects")
    models = unique(data["model"])
    formulations = _formulations(data["formulation"])
    contrasts = unique(data["contrast"])
    columns = [(c, f) for c in contrasts for f in formulations]
    keys = [f"{c} | {f}" for c, f in columns]
    positions = _x_positions(data["history"])
    fig, axes = _grid(
        models,
        keys,
        sharey="row",
        settings=settings,
        legend_rows=1,
    )
    names = data.drop_duplicates("contrast").set_index("contrast")
    for col, (contrast, formulation) in enumerate(columns):
        title = f"{names.at[contrast, 'group_a']} vs {names.at[contrast, 'group_b']}"
        axes[0, col].set_title(
            f"{title}\n{FORMULATION_TITLES.get(formulation, formulation)}", fontsize=9
        )
    for (model, formulation, contrast), panel in data.groupby(
        ["model", "formulation", "contrast"], sort=False
    ):
        ax = axes[models.index(model), columns.index((contrast, formulation))]
        groups = {side: str(names.at[contrast, f"group_{side}"]) for side in ("a", "b")}
        _draw_group_means(ax, panel, groups, confidence, positions)
    _finish_axes(axes, positions, SEQ_LABEL)
    fig.suptitle(
        f"group means and {confidence:.0%} confidence intervals (a: first-named group)",
        fontsize=FONT_SIZE + 1,
    )
    save(fig, paths, settings.dpi)
    return fig


def _draw_group_means(
    ax: Axes,
    panel: pd.DataFrame,
    groups: Mapping[str, str],
    confidence: float,
    positions: Mapping[str, float],
) -> None:
    """One panel of the contrast figure: group a (red) and b (blue; ``groups``: side → name)
    as mean sequentiality against history size with t-based bands (:func:`_group_band`), the
    full history as a dodged point; a legend in the panel."""
    ax.axhline(0, color="0.5", linewidth=0.7, linestyle="--")
    for side, color, offset in (("a", "#d62728", -0.12), ("b", "#1f77b4", 0.12)):
        finite, full = _split(_group_band(panel, side, confidence), positions)
        label = f"{side}: {groups[side]}"
        _interval(ax, finite, color, "mean", "low", "high")
        ax.plot(finite["x"], finite["mean"], color=color, marker="o", ms=2.5, lw=1.2, label=label)
        _error_points(ax, full, offset, color, "mean", "low", "high")
    ax.legend(fontsize=FONT_SIZE - 1, frameon=False, loc="best")


def _group_band(panel: pd.DataFrame, side: str, confidence: float) -> pd.DataFrame:
    """``panel`` with group ``side``'s (``a`` or ``b``) mean (nats/token) and its t-based
    confidence band: ``mean``, ``low``, ``high`` = mean ∓ t_{(1+confidence)/2, n−1} · sd /
    sqrt(n) (NaN for a group of one story)."""
    n = panel[f"n_{side}"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t_crit = sps.t.ppf((1 + confidence) / 2, np.where(n > 1, n - 1, np.nan))
        half = t_crit * panel[f"sd_{side}"].to_numpy(dtype=float) / np.sqrt(n)
    return panel.assign(mean=panel[f"mean_{side}"], low=panel[f"mean_{side}"] - half).assign(
        high=lambda d, h=half: d["mean"] + h
    )


def _legend_columns(labels: Sequence[str], width: float) -> int:
    """Legend columns that fit ``width`` inches (entries ~0.07 in per character + 0.6 in)."""
    entry = max(len(label) for label in labels) * 0.07 + 0.6
    return max(1, min(len(labels), int(width // entry)))


def _legend_rows(labels: Sequence[str], ncols: int) -> int:
    return -(-len(labels) // ncols)


def _dodge(n: int, width: float) -> list[float]:
    """Horizontal offsets spreading n series over ``width`` (x units) around 0."""
    return [0.0] if n <= 1 else list(np.linspace(-width / 2, width / 2, n))


def _interval(ax: Axes, rows: pd.DataFrame, color: object, y: str, low: str, high: str) -> None:
    """The confidence interval of a line's points: a band over two or more points, an error bar
    on a single one (a band over one x is invisible: ``nll.max_history: 1``)."""
    if len(rows) >= 2:
        ax.fill_between(rows["x"], rows[low], rows[high], color=color, alpha=0.15, lw=0)
    else:
        _error_points(ax, rows, 0.0, color, y, low, high)


def _error_points(
    ax: Axes, rows: pd.DataFrame, offset: float, color: object, y: str, low: str, high: str
) -> None:
    """Error bars (no connecting line, no legend entry) at ``rows['x'] + offset``."""
    if rows.empty:
        return
    mean = rows[y].to_numpy(dtype=float)
    err = np.vstack(
        [mean - rows[low].to_numpy(dtype=float), rows[high].to_numpy(dtype=float) - mean]
    )
    ax.errorbar(
        rows["x"] + offset,
        mean,
        yerr=np.where(np.isfinite(err), err, 0.0),
        fmt="o",
        ms=2.5,
        color=color,
        elinewidth=0.9,
        capsize=1.5,
        label="_nolegend_",
    )


def _legend_handle(axes: np.ndarray, label: str) -> Line2D:
    """The first line labelled ``label`` in any panel (for the figure legend)."""
    for ax in axes.flat:
        for line in ax.get_lines():
            if line.get_label() == label:
                return line
    raise ValueError(f"no line labelled {label!r}")
