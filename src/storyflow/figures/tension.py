"""Figures of the tension measure (docs/tension.md): tension by group, example no-rate curves
with their reversals, and the inflection rate by vertex-angle threshold."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from storyflow.figures.common import FONT_SIZE, save, story_type_colors, unique
from storyflow.measures.tension.curves import moving_average, reversals

#: Story statistics shown by :func:`plot_tension_by_group` (shares 0-1), with their labels.
GROUP_MEASURES = {
    "no_rate": "mean no-rate",
    "late_no_rate": "late no-rate (pct >= 0.8)",
    "retention": "post-spike retention",
}


def _series_labels(frame: pd.DataFrame) -> list[tuple[str, str]]:
    return list(dict.fromkeys(zip(frame["model"], frame["judge"], strict=True)))


def plot_tension_by_group(groups: pd.DataFrame, paths: Sequence[str | Path], dpi: int) -> None:
    """Group means with their CIs (``groups``: :data:`storyflow.tables.TENSION_GROUPS`), one
    panel per story statistic of :data:`GROUP_MEASURES`, one marker per forecaster × judge
    (dodged), groups on the x axis in table order."""
    series = _series_labels(groups)
    story_types = unique(groups["story_type"].astype(str))
    height = 3.0 + 0.18 * len(series)
    fig = Figure(figsize=(max(6.0, 0.9 * len(story_types) * len(GROUP_MEASURES) / 2 + 2), height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(GROUP_MEASURES), squeeze=False)[0]
    width = 0.6
    offsets = np.linspace(-width / 2, width / 2, len(series)) if len(series) > 1 else [0.0]
    markers = "osD^v<>"
    for ax, (measure, label) in zip(axes, GROUP_MEASURES.items(), strict=True):
        rows = groups[groups["measure"] == measure]
        for i, (model, judge) in enumerate(series):
            sub = rows[(rows["model"] == model) & (rows["judge"] == judge)].set_index("story_type")
            sub = sub.reindex(story_types)
            x = np.arange(len(story_types)) + offsets[i]
            err = np.vstack([sub["mean"] - sub["ci_low"], sub["ci_high"] - sub["mean"]])
            ax.errorbar(
                x,
                sub["mean"],
                yerr=np.nan_to_num(err),
                fmt=markers[i % len(markers)],
                markersize=4,
                capsize=2,
                label=f"{model} / {judge} (K = {int(rows['k'].iloc[0]) if len(rows) else '?'})",
            )
        ax.set_xticks(range(len(story_types)))
        ax.set_xticklabels(story_types, rotation=30, ha="right", fontsize=FONT_SIZE)
        ax.set_ylim(-0.05, 1.05)  # shares; CIs of small groups reach past 0 and 1 (clipped)
        ax.set_title(label, fontsize=FONT_SIZE + 1)
        ax.tick_params(labelsize=FONT_SIZE)
    axes[0].set_ylabel("share of endings (0-1); mean and CI", fontsize=FONT_SIZE)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncols=1, fontsize=FONT_SIZE, frameon=False)
    fig.tight_layout(rect=(0, (0.05 + 0.18 * len(series)) / height, 1, 1))
    save(fig, paths, dpi)


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
    smoothing: int = 3,
    angle: float = 60.0,
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
        for j, vertex in reversals(pct, rate, smoothing):
            sharp = vertex <= angle
            ax.plot(
                pct[j],
                smooth[j],
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


def plot_inflection_rates(stories: pd.DataFrame, paths: Sequence[str | Path], dpi: int) -> None:
    """Mean inflection rate per story type against the vertex-angle threshold α (``stories``:
    :data:`storyflow.tables.TENSION_STORIES` rows, ``inflection_rate_<α>`` columns), one panel
    per forecaster × judge; stories with NaN rates (fewer than the minimum cuts) left out."""
    columns = [c for c in stories.columns if c.startswith("inflection_rate_")]
    alphas = sorted(columns, key=lambda c: float(c.removeprefix("inflection_rate_")))
    series = _series_labels(stories)
    colors = story_type_colors(stories["story_type"].astype(str))
    fig = Figure(figsize=(3.4 * max(1, len(series)) + 1.8, 3.2))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(1, len(series)), squeeze=False)[0]
    x = [float(c.removeprefix("inflection_rate_")) for c in alphas]
    for ax, (model, judge) in zip(axes, series, strict=False):
        sub = stories[(stories["model"] == model) & (stories["judge"] == judge)]
        for group in unique(sub["story_type"].astype(str)):
            rates = sub.loc[sub["story_type"] == group, alphas]
            n = int(rates.notna().all(axis=1).sum())
            ax.plot(x, rates.mean().to_numpy(), "o-", color=colors[group], label=f"{group} (n={n})")
        ax.set_title(f"{model} / {judge}", fontsize=FONT_SIZE)
        ax.set_xticks(x)
        ax.set_xlabel("vertex-angle threshold α (degrees)", fontsize=FONT_SIZE)
        ax.tick_params(labelsize=FONT_SIZE)
    axes[0].set_ylabel("inflection rate (share of cuts)", fontsize=FONT_SIZE)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=FONT_SIZE - 1, frameon=False)
    fig.tight_layout(rect=(0, 0, 1 - 1.8 / fig.get_figwidth(), 1))
    save(fig, paths, dpi)
