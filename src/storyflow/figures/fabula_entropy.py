"""Figures of the fabula-entropy indices (docs/fabula_entropy.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from storyflow.figures.common import FONT_SIZE, save, story_type_colors, unique

KIND_LABELS = {"ewc": "EWC (world coherence)", "etc": "ETC (transitional coherence)"}


def headline_pool(pools: Sequence[str]) -> str:
    """The pool a figure shows: 'pooled' (readers that passed the gate) when there is one,
    else 'all' (every reader)."""
    return "pooled" if "pooled" in pools else "all"


def plot_fabula_entropy(
    indices: pd.DataFrame,
    dose: pd.DataFrame,
    distribution_paths: Sequence[str | Path],
    dose_paths: Sequence[str | Path],
    *,
    dpi: int = 150,
) -> None:
    """Two figures from :data:`tables.FEI_STORY_INDICES` and :data:`tables.FEI_DOSE`.

    Distributions (as the paper's figures 1-2): per index kind (columns) and measure (rows:
    soft, hard), the story-level index in bits of the original and each corrupted version, one
    violin and dots per version, for the headline pool. Dose-response: the mean index (95% CI
    bars from the table) against the number of corruptions k, one line per model (its prompt
    variants pooled; each reader when a model has one variant) and one for the pooled readers,
    per kind and measure. The pool and its readers are in the
    titles.
    """
    pool_name = headline_pool(list(indices["pool"].unique()))
    shown = indices[indices["pool"] == pool_name]
    kinds = [k for k in ("ewc", "etc") if k in set(shown["kind"])] or ["etc"]
    measures = ("soft", "hard")
    fig = Figure(figsize=(3.6 * len(kinds), 5.2))
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(2, len(kinds), squeeze=False))
    readers = shown["readers"].iloc[0] if len(shown) else ""
    for j, kind in enumerate(kinds):
        part = shown[shown["kind"] == kind]
        versions = ["original", *sorted(v for v in unique(part["version"]) if v != "original")]
        colors = story_type_colors(versions)
        for i, measure in enumerate(measures):
            ax = axes[i, j]
            data = [part.loc[part["version"] == v, measure].to_numpy(float) for v in versions]
            filled = [(x, d) for x, d in enumerate(data) if len(d)]
            if filled:
                parts = ax.violinplot(
                    [d for _, d in filled], positions=[x for x, _ in filled], showmedians=True
                )
                for body, (x, _) in zip(parts["bodies"], filled, strict=True):
                    body.set_facecolor(colors[versions[x]])
                    body.set_alpha(0.5)
                for x, d in filled:
                    jitter = np.linspace(-0.08, 0.08, len(d)) if len(d) > 1 else [0.0]
                    ax.scatter(x + np.asarray(jitter), d, s=6, color="black", zorder=3)
            ax.set_xticks(range(len(versions)), versions, rotation=20, fontsize=FONT_SIZE)
            ax.set_ylabel(f"{measure} entropy (bits)", fontsize=FONT_SIZE)
            ax.set_ylim(-0.02, 1.02)
            ax.tick_params(labelsize=FONT_SIZE)
            if i == 0:
                ax.set_title(KIND_LABELS.get(kind, kind), fontsize=FONT_SIZE + 1)
    fig.suptitle(f"readers: {pool_name} ({readers})", fontsize=FONT_SIZE)
    fig.tight_layout()
    save(fig, distribution_paths, dpi)

    fig = Figure(figsize=(3.6 * len(kinds), 5.2))
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(2, len(kinds), squeeze=False))
    names = unique(indices["pool"])
    models = [p for p in names if "/" not in p and p not in ("pooled", "all")]
    single = [p for p in names if "/" in p]
    lines = (models or single) + [p for p in ("pooled",) if p in names]
    colors = story_type_colors(lines)
    for j, kind in enumerate(kinds):
        for i, measure in enumerate(measures):
            ax = axes[i, j]
            for name in lines:
                d = dose[
                    (dose["pool"] == name) & (dose["kind"] == kind) & (dose["measure"] == measure)
                ].sort_values("k")
                if d.empty:
                    continue
                err = np.vstack([d["mean"] - d["ci_low"], d["ci_high"] - d["mean"]])
                ax.errorbar(
                    d["k"],
                    d["mean"],
                    yerr=np.nan_to_num(err),
                    marker="o",
                    capsize=2,
                    label=name,
                    color=colors[name],
                )
            ax.set_xticks(sorted(set(dose["k"])))
            ax.set_xlabel("corruptions k (0 = original)", fontsize=FONT_SIZE)
            ax.tick_params(labelsize=FONT_SIZE)
            ax.set_ylabel(f"mean {measure} entropy (bits)", fontsize=FONT_SIZE)
            if i == 0:
                ax.set_title(KIND_LABELS.get(kind, kind), fontsize=FONT_SIZE + 1)
            ax.legend(fontsize=FONT_SIZE - 1)
    fig.tight_layout()
    save(fig, dose_paths, dpi)
