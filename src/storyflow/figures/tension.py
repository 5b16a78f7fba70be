"""Figures of the tension measure (docs/tension.md): tension by group, example no-rate curves
with their reversals, and the inflection rate by vertex-angle threshold.

Every plotted mean carries its interval (percentile bootstrap over stories, from
:data:`storyflow.tables.TENSION_GROUPS`); a group too small for one (``flag``) is drawn as a
hollow point alone. A forecaster × judge whose models failed their validity checks
(``valid`` False) is drawn grey and hollow, and the legend or title says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.typing import ColorType

from storyflow.figures.common import FONT_SIZE, save, story_type_colors, unique
from storyflow.measures.tension.curves import moving_average, reversals

#: Story statistics shown by :func:`plot_tension_by_group`, with their labels and y ranges.
GROUP_MEASURES = {
    "no_rate": ("mean no-rate", "share of endings (0-1)", (-0.05, 1.05)),
    "late_no_rate": ("late no-rate (pct >= 0.8)", "share of endings (0-1)", (-0.05, 1.05)),
    "post_spike_convergence": (
        "post-spike convergence",
        "% change after a peak (more negative: sharper)",
        (-105.0, 5.0),
    ),
}
FAILED_COLOR = "#9e9e9e"


def _series_labels(frame: pd.DataFrame) -> list[tuple[str, str]]:
    return list(dict.fromkeys(zip(frame["model"], frame["judge"], strict=True)))


def _verdict(rows: pd.DataFrame) -> tuple[bool, str]:
    """(valid, failed checks) of one forecaster × judge's rows (valid when every row is)."""
    if rows.empty:
        return True, ""
    valid = bool(rows["valid"].astype(bool).all())
    failed = "; ".join(dict.fromkeys(str(f) for f in rows["failed"].fillna("") if f))
    return valid, failed


def _draw_means(
    ax: Axes, x: np.ndarray, rows: pd.DataFrame, *, marker: str, color: ColorType, filled: bool
) -> None:
    """Means at ``x`` with their CIs as error bars; rows without a CI as hollow points alone."""
    mean = rows["mean"].to_numpy(float)
    has_ci = rows["ci_low"].notna().to_numpy() & rows["ci_high"].notna().to_numpy()
    face = color if filled else "none"
    if has_ci.any():
        err = np.vstack(
            [mean[has_ci] - rows["ci_low"].to_numpy(float)[has_ci],
             rows["ci_high"].to_numpy(float)[has_ci] - mean[has_ci]]
        )  # fmt: skip
        ax.errorbar(
            x[has_ci], mean[has_ci], yerr=err, fmt=marker, markersize=4, capsize=2,
            color=color, markerfacecolor=face, markeredgecolor=color,
        )  # fmt: skip
    bare = ~has_ci & ~np.isnan(mean)
    if bare.any():
        ax.plot(
            x[bare], mean[bare], marker, markersize=4, linestyle="none",
            markerfacecolor="none", markeredgecolor=color,
        )  # fmt: skip


def plot_tension_by_group(groups: pd.DataFrame, paths: Sequence[str | Path], dpi: int) -> None:
    """:func:`tension_by_group_figure` saved to ``paths``."""
    save(tension_by_group_figure(groups), paths, dpi)


def tension_by_group_figure(groups: pd.DataFrame) -> Figure:
    """Group means with their CIs (``groups``: :data:`storyflow.tables.TENSION_GROUPS`), one
    panel per story statistic of :data:`GROUP_MEASURES`, one marker per forecaster × judge
    (dodged), groups on the x axis in table order. A mean without a CI (a group of one
    story) is a hollow point; a forecaster × judge that failed its
    validity checks is grey and hollow, "failed validity" in its legend entry."""
    series = _series_labels(groups)
    story_types = unique(groups["story_type"].astype(str))
    height = 3.0 + 0.18 * (len(series) + 1)
    fig = Figure(figsize=(max(6.0, 0.9 * len(story_types) * len(GROUP_MEASURES) / 2 + 2), height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(GROUP_MEASURES), squeeze=False)[0]
    width = 0.6
    offsets = np.linspace(-width / 2, width / 2, len(series)) if len(series) > 1 else [0.0]
    markers = "osD^v<>"
    handles = []
    for i, (model, judge) in enumerate(series):
        mine = groups[(groups["model"] == model) & (groups["judge"] == judge)]
        valid, failed = _verdict(mine)
        color = f"C{i % 10}" if valid else FAILED_COLOR
        marker = markers[i % len(markers)]
        k = int(mine["k"].iloc[0]) if len(mine) else "?"
        label = f"{model} / {judge} (K = {k})"
        if not valid:
            label += f": failed validity ({failed})" if failed else ": failed validity"
        handles.append(
            Line2D([], [], marker=marker, linestyle="none", color=color,
                   markerfacecolor=color if valid else "none", label=label)
        )  # fmt: skip
        for ax, measure in zip(axes, GROUP_MEASURES, strict=True):
            sub = mine[mine["measure"] == measure].set_index("story_type").reindex(story_types)
            x = np.arange(len(story_types)) + offsets[i]
            _draw_means(ax, x, sub, marker=marker, color=color, filled=valid)
    if groups["ci_low"].isna().any():
        handles.append(
            Line2D([], [], marker="o", linestyle="none", color="black", markerfacecolor="none",
                   label="hollow, no bar: one story, no interval")
        )  # fmt: skip
    for ax, (title, unit, limits) in zip(axes, GROUP_MEASURES.values(), strict=True):
        ax.set_xticks(range(len(story_types)))
        ax.set_xticklabels(story_types, rotation=30, ha="right", fontsize=FONT_SIZE)
        ax.set_ylim(*limits)
        ax.set_title(title, fontsize=FONT_SIZE + 1)
        ax.set_ylabel(f"{unit}; mean and CI", fontsize=FONT_SIZE - 1)
        ax.tick_params(labelsize=FONT_SIZE)
    if handles:
        fig.legend(handles=handles, loc="lower center", ncols=1, fontsize=FONT_SIZE, frameon=False)
    fig.tight_layout(rect=(0, (0.05 + 0.18 * len(handles)) / height, 1, 1))
    return fig


def example_stories(curves: pd.DataFrame, per_group: int = 1) -> list[str]:
    """The story ids drawn: per story type, the ``per_group`` stories with the most cuts (ties:
    the first in table order), groups in table order."""
    counts = curves.groupby(["story_type", "story_id"], sort=False).size().rename("n")
    counts = counts.reset_index()
    chosen = []
    for group in unique(counts["story_type"]):
        sub = counts[counts["story_type"] == group]
        chosen += (
            sub.sort_values("n", ascending=False, kind="stable")["story_id"]
            .head(per_group)
            .tolist()
        )
    return chosen


def plot_example_curves(
    curves: pd.DataFrame,
    paths: Sequence[str | Path],
    dpi: int,
    *,
    smoothing: int,
    angle: float,
    per_group: int = 1,
) -> None:
    """No-rate curves of example stories (``curves``: :data:`storyflow.tables.TENSION_CURVES` of
    one forecaster × judge): the no-rate at each cut (dots), its centred moving average over
    ``smoothing`` cuts (line), and the reversals of the smoothed curve (rings; filled when the
    vertex angle is at most ``angle`` degrees, i.e. counted by the inflection rate at ``angle``)."""
    curves = curves.dropna(subset=["no_rate"])
    stories = example_stories(curves, per_group)
    colors = story_type_colors(curves["story_type"].astype(str))
    ncols = min(3, max(1, len(stories)))
    nrows = max(1, math.ceil(len(stories) / ncols))
    fig = Figure(figsize=(3.0 * ncols, 2.3 * nrows + 0.4))
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, story_id in zip(axes, stories, strict=False):
        curve = curves[curves["story_id"] == story_id].sort_values("cut")
        pct, rate = curve["pct"].to_numpy(), curve["no_rate"].to_numpy()
        color = colors[str(curve["story_type"].iloc[0])]
        ax.plot(pct, rate, "o", color=color, markersize=3, alpha=0.6)
        smooth = moving_average(rate, smoothing)
        ax.plot(pct, smooth, "-", color=color, linewidth=1.2)
        for first, last, vertex in reversals(pct, rate, smoothing):
            sharp = vertex <= angle
            ax.plot(
                (pct[first] + pct[last]) / 2,  # a flat top or bottom: its middle
                smooth[first],
                "o",
                markersize=7,
                markerfacecolor=color if sharp else "none",
                markeredgecolor="black",
            )
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlim(0, 1)
        ax.set_title(f"{curve['story_type'].iloc[0]}: {str(story_id)[:12]}", fontsize=FONT_SIZE)
        ax.tick_params(labelsize=FONT_SIZE)
    for ax in axes[len(stories) :]:
        ax.set_visible(False)
    if len(curves):
        model, judge = curves["model"].iloc[0], curves["judge"].iloc[0]
        fig.suptitle(
            f"no-rate by share of the story read ({model}, judge {judge}); rings: reversals, "
            f"filled: vertex angle <= {angle:g} deg",
            fontsize=FONT_SIZE,
        )
    fig.supxlabel("pct (share of story tokens before the cut)", fontsize=FONT_SIZE)
    fig.supylabel("no-rate", fontsize=FONT_SIZE)
    fig.tight_layout()
    save(fig, paths, dpi)


def plot_inflection_rates(groups: pd.DataFrame, paths: Sequence[str | Path], dpi: int) -> None:
    """:func:`inflection_rates_figure` saved to ``paths``."""
    save(inflection_rates_figure(groups), paths, dpi)


def inflection_rates_figure(groups: pd.DataFrame) -> Figure:
    """Mean inflection rate per story type against the vertex-angle threshold α, with its CI
    (``groups``: :data:`storyflow.tables.TENSION_GROUPS`, the ``inflection_rate_<α>`` rows;
    stories with NaN rates, fewer than the minimum cuts, are not in them), one panel per
    forecaster × judge. A mean without a CI is a hollow point; a panel whose forecaster or judge
    failed its validity checks is grey and hollow, the failed checks in its title."""
    rates = groups[groups["measure"].astype(str).str.startswith("inflection_rate_")]
    rates = rates.assign(alpha=rates["measure"].str.removeprefix("inflection_rate_").astype(float))
    series = _series_labels(rates)
    colors = story_type_colors(rates["story_type"].astype(str))
    fig = Figure(figsize=(3.4 * max(1, len(series)) + 1.8, 3.4))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(1, len(series)), squeeze=False)[0]
    handles: dict[str, Line2D] = {}
    for ax, (model, judge) in zip(axes, series, strict=False):
        sub = rates[(rates["model"] == model) & (rates["judge"] == judge)]
        valid, failed = _verdict(sub)
        for group in unique(sub["story_type"].astype(str)):
            rows = sub[sub["story_type"] == group].sort_values("alpha")
            x = rows["alpha"].to_numpy(float)
            color = colors[group] if valid else FAILED_COLOR
            ax.plot(x, rows["mean"], "-", color=color, linewidth=1, alpha=0.7)
            _draw_means(ax, x, rows, marker="o", color=colors[group] if valid else color,
                        filled=valid)  # fmt: skip
            n = int(rows["n"].max()) if len(rows) else 0
            handles.setdefault(
                f"{group} (n={n})",
                Line2D([], [], marker="o", color=colors[group], label=f"{group} (n={n})"),
            )
        title = f"{model} / {judge}"
        if not valid:
            title += f"\nfailed validity: {failed}" if failed else "\nfailed validity"
        ax.set_title(title, fontsize=FONT_SIZE, color="black" if valid else "#616161")
        ax.set_xticks(sorted(set(rates["alpha"])))
        ax.set_xlabel("vertex-angle threshold α (degrees)", fontsize=FONT_SIZE)
        ax.set_ylim(-0.05, 1.05)
        ax.tick_params(labelsize=FONT_SIZE)
    axes[0].set_ylabel("inflection rate (share of cuts); mean and CI", fontsize=FONT_SIZE)
    legend = list(handles.values())
    if rates["ci_low"].isna().any():
        legend.append(
            Line2D([], [], marker="o", linestyle="none", color="black", markerfacecolor="none",
                   label="hollow, no bar: too few\nstories for an interval")
        )  # fmt: skip
    fig.legend(handles=legend, loc="center right", fontsize=FONT_SIZE - 1, frameon=False)
    fig.tight_layout(rect=(0, 0, 1 - 1.8 / fig.get_figwidth(), 1))
    return fig
