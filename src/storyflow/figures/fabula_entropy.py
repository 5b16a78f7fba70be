"""Figures of the fabula-entropy indices (docs/fabula_entropy.md).

The headline measure (``fabula_entropy.headline``, read from the ``headline`` column of the
means table) is the top row, the other one below it; each axis says which is which. Results
resting on readers that failed their validity check are drawn grey and hollow and say so in the
legend or title; every mean is drawn with its bootstrap interval (a single story has none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.typing import ColorType

from storyflow.figures.common import FONT_SIZE, save, story_type_colors, unique
from storyflow.measures.fabula_entropy.compare import INDICES

KIND_LABELS = {"ewc": "EWC (world coherence)", "etc": "ETC (transitional coherence)"}
MEASURE_LABELS = {
    "hard": "hard entropy (bits; the paper's index)",
    "soft": "soft entropy (bits)",
}


def measure_order(dose: pd.DataFrame) -> list[str]:
    """The measures, the headline one (the ``headline`` rows of :data:`tables.FEI_DOSE`) first."""
    marked = set(dose.loc[dose["headline"], "measure"]) if len(dose) else set()
    return sorted(INDICES, key=lambda m: m not in marked)


def measure_label(measure: str, headline: bool) -> str:
    """An axis label: the measure, and whether it is the headline."""
    label = MEASURE_LABELS[measure]
    return label.replace("(bits", "(headline; bits") if headline else label


FAILED = "#9a9a9a"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def headline_pool(pools: Sequence[str]) -> str:
    """The pool a figure shows: 'pooled' (readers that passed the validity check) when there is
    one, else 'all' (every reader; drawn as failed)."""
    return "pooled" if "pooled" in pools else "all"


def _interval(ax: Axes, x: float, row: pd.Series, color: ColorType, filled: bool) -> None:
    """The mean at ``x`` with its CI bar (none when the table gives none)."""
    low, high = row["ci_low"], row["ci_high"]
    err = None
    if not (np.isnan(low) or np.isnan(high)):
        err = [[row["mean"] - low], [high - row["mean"]]]
    ax.errorbar(
        [x],
        [row["mean"]],
        yerr=err,
        fmt="D",
        color=color,
        markerfacecolor=color if filled else "none",
        capsize=3,
        zorder=4,
    )


def plot_fabula_entropy(
    indices: pd.DataFrame,
    dose: pd.DataFrame,
    distribution_paths: Sequence[str | Path],
    dose_paths: Sequence[str | Path],
    *,
    dpi: int,
) -> None:
    """Both figures (:func:`distributions_figure`, :func:`dose_figure`), saved."""
    save(distributions_figure(indices, dose), distribution_paths, dpi)
    save(dose_figure(indices, dose), dose_paths, dpi)


def _kinds(indices: pd.DataFrame) -> list[str]:
    return [k for k in ("ewc", "etc") if k in set(indices["kind"])] or ["etc"]


def distributions_figure(indices: pd.DataFrame, dose: pd.DataFrame) -> Figure:
    """Distributions (as the paper's figures 1-2) from :data:`tables.FEI_STORY_INDICES` and the
    means of :data:`tables.FEI_DOSE`: per index kind (columns) and measure (rows: the headline
    measure on top, the other below), the story-level index in bits of the original and each
    corrupted version, a violin and dots per version and the mean with its bootstrap CI, for the
    headline pool (the valid readers; every reader, grey and hollow, when none passed). The
    title names the readers, the answers per question and what limits them (one reader, failed
    readers)."""
    pool_name = headline_pool(list(indices["pool"].unique()))
    shown = indices[indices["pool"] == pool_name]
    means = dose[dose["pool"] == pool_name]
    kinds = _kinds(shown)
    valid = bool(shown["valid"].all()) if len(shown) else False
    fig = Figure(figsize=(3.8 * len(kinds), 5.6))
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(2, len(kinds), squeeze=False))
    order = measure_order(dose)
    for j, kind in enumerate(kinds):
        part = shown[shown["kind"] == kind]
        versions = ["original", *sorted(v for v in unique(part["version"]) if v != "original")]
        colors = story_type_colors(versions)
        for i, measure in enumerate(order):
            ax = axes[i, j]
            kind_means = means[(means["kind"] == kind) & (means["measure"] == measure)]
            _draw_versions(ax, part, versions, measure, kind_means, colors, valid)
            ax.set_xticks(range(len(versions)), versions, rotation=20, fontsize=FONT_SIZE)
            ax.set_ylabel(measure_label(measure, i == 0), fontsize=FONT_SIZE)
            ax.set_ylim(-0.03, 1.03)
            ax.tick_params(labelsize=FONT_SIZE)
            if i == 0:
                ax.set_title(KIND_LABELS.get(kind, kind), fontsize=FONT_SIZE + 1)
    fig.suptitle(_distributions_title(shown, pool_name, valid), fontsize=FONT_SIZE)
    fig.tight_layout()
    return fig


def _draw_versions(
    ax: Axes,
    part: pd.DataFrame,
    versions: Sequence[str],
    measure: str,
    means: pd.DataFrame,
    colors: Mapping[str, ColorType],
    valid: bool,
) -> None:
    """One panel of the distributions: per story version with stories (x = its place in
    ``versions``), a violin and the stories' dots of ``measure`` (bits), and the version's
    mean with its CI from ``means`` (the panel's kind and measure) beside them; grey and
    hollow when the readers are not ``valid``."""
    data = [part.loc[part["version"] == v, measure].to_numpy(float) for v in versions]
    filled = [(x, d) for x, d in enumerate(data) if len(d)]
    if not filled:
        return
    parts = ax.violinplot(
        [d for _, d in filled], positions=[x for x, _ in filled], showmedians=False
    )
    # matplotlib's stubs type the bodies as one Collection; violinplot returns a list of them
    bodies = cast("list[PolyCollection]", parts["bodies"])
    for body, (x, _) in zip(bodies, filled, strict=True):
        color = colors[versions[x]] if valid else FAILED
        body.set_facecolor(color if valid else "none")
        body.set_edgecolor(color)
        body.set_alpha(0.5)
    for x, d in filled:
        jitter = np.linspace(-0.08, 0.08, len(d)) if len(d) > 1 else [0.0]
        ax.scatter(
            x + np.asarray(jitter),
            d,
            s=6,
            color="black" if valid else FAILED,
            zorder=3,
        )
        row = means[means["version"] == versions[x]]
        if len(row):
            _interval(ax, x + 0.22, row.iloc[0], "black" if valid else FAILED, valid)


def _distributions_title(shown: pd.DataFrame, pool_name: str, valid: bool) -> str:
    """The distributions' title: the readers of the pool and the answers per question, what
    limits them (a note), and NOT VALID first when no reader passed its validity check."""
    readers = shown["readers"].iloc[0] if len(shown) else ""
    note = shown["note"].iloc[0] if len(shown) else ""
    answers = int(shown["population"].iloc[0]) if len(shown) else 0
    title = (
        f"readers: {pool_name} ({readers}; {answers} answer(s) per question); diamonds: mean "
        "with its bootstrap CI"
    )
    if not valid:
        title = f"NOT VALID: no reader passed its validity check. {title}"
    if note:
        title += f"\n{note}"
    return title


def dose_figure(indices: pd.DataFrame, dose: pd.DataFrame) -> Figure:
    """Dose-response: the mean index (bootstrap CI bars) against the number of corruptions k,
    one line per model (its prompt variants pooled; each reader when a model has one variant)
    and one for the pooled valid readers, per kind and measure (the headline measure in the top
    row); lines of readers that failed their validity check are grey, dashed and hollow,
    "(failed validity)" in the legend."""
    kinds = _kinds(indices)
    fig = Figure(figsize=(3.8 * len(kinds), 5.6))
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(2, len(kinds), squeeze=False))
    names = unique(indices["pool"])
    models = [p for p in names if "/" not in p and p not in ("pooled", "all", "human")]
    single = [p for p in names if "/" in p]
    lines = (models or single) + [p for p in ("pooled", "human") if p in names]
    colors = story_type_colors(lines)
    steps = dose[dose["condition"] != "wrong_ending"]
    order = measure_order(dose)
    for j, kind in enumerate(kinds):
        for i, measure in enumerate(order):
            ax = axes[i, j]
            for n, name in enumerate(lines):
                d = steps[
                    (steps["pool"] == name)
                    & (steps["kind"] == kind)
                    & (steps["measure"] == measure)
                ].sort_values("k")
                if d.empty:
                    continue
                ok = bool(d["valid"].all())
                color = colors[name] if ok else FAILED
                err = np.vstack([d["mean"] - d["ci_low"], d["ci_high"] - d["mean"]])
                ax.errorbar(
                    d["k"],
                    d["mean"],
                    yerr=np.where(np.isnan(err), 0.0, err),
                    marker=MARKERS[n % len(MARKERS)],
                    linestyle="-" if ok else "--",
                    capsize=2,
                    label=name if ok else f"{name} (failed validity)",
                    color=color,
                    markerfacecolor=color if ok else "none",
                )
            ax.set_xticks(sorted(set(steps["k"])))
            ax.set_xlabel("corruptions k (0 = original)", fontsize=FONT_SIZE)
            ax.tick_params(labelsize=FONT_SIZE)
            ax.set_ylabel(f"mean {measure_label(measure, i == 0)}", fontsize=FONT_SIZE)
            if i == 0:
                ax.set_title(KIND_LABELS.get(kind, kind), fontsize=FONT_SIZE + 1)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=FONT_SIZE - 1)
    fig.tight_layout()
    return fig
