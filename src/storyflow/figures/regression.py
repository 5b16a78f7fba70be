"""Figure of the mixed-effects regressions: covariate estimates with confidence intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from storyflow.errors import StoryflowError
from storyflow.figures.common import save

KIND_TITLES = {"gain": "gain: NLL∅ − NLL C∅", "raw": "raw: NLL C∅ | NLL∅"}


def plot_coefficients(
    coefficients: pd.DataFrame,
    paths: Sequence[str | Path],
    *,
    dpi: int,
    width_per_panel: float,
    height_per_row: float = 0.24,
) -> Any:
    """Forest plot: covariate estimates with confidence intervals, one panel per specification.

    Rows are the covariates (``role == "covariate"``; intercept, model and NLL∅ terms are in the
    tables only), x is the estimate (nats/token per SD for z-scored predictors, per unit for
    0/1 indicators). Filled markers: significant after Benjamini–Hochberg; open: not.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = coefficients[coefficients["role"] == "covariate"]
    if data.empty:
        raise StoryflowError("the coefficient table has no covariate rows to plot")
    specs = list(dict.fromkeys(data["spec"]))
    labels = list(dict.fromkeys(data["label"]))
    y = {label: len(labels) - 1 - i for i, label in enumerate(labels)}
    fig = Figure(
        figsize=(0.8 + width_per_panel * len(specs), 1.3 + height_per_row * len(labels)),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(specs), sharey=True, squeeze=False)[0]
    for ax, spec in zip(axes, specs, strict=True):
        _draw_specification(ax, data[data["spec"] == spec], y)
    axes[0].set_yticks(list(y.values()), list(y))
    axes[0].set_ylim(-0.7, len(labels) - 0.3)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        names,
        loc="outside lower center",
        ncols=2,
        fontsize=7,
        frameon=False,
        title="mixed-effects estimate with confidence interval (intercept, model and NLL∅ "
        "terms: see the tables)",
        title_fontsize=7,
    )
    save(fig, paths, dpi)
    return fig


def _draw_specification(ax: Any, panel: pd.DataFrame, y: Mapping[str, int]) -> None:
    """One specification's panel: each covariate's estimate (nats/token per SD or per
    indicator) at its row ``y[label]`` with its confidence interval, filled when significant
    after Benjamini–Hochberg; a dashed line at 0; the title gives the kind, history and n."""
    first = panel.iloc[0]
    ax.axvline(0, color="0.4", linewidth=0.7, linestyle="--")
    for significant, face in ((True, "C0"), (False, "white")):
        part = panel[panel["significant_fdr"].astype(bool) == significant]
        ys = part["label"].map(y).to_numpy(dtype=float)
        est = part["estimate"].to_numpy(dtype=float)
        err = np.vstack(
            [
                est - part["ci_low"].to_numpy(dtype=float),
                part["ci_high"].to_numpy(dtype=float) - est,
            ]
        )
        ax.errorbar(
            est,
            ys,
            xerr=np.where(np.isfinite(err), err, 0.0),
            fmt="o",
            ms=3.5,
            color="C0",
            mfc=face,
            elinewidth=0.9,
            capsize=1.5,
            label="p_FDR < α" if significant else "not significant",
        )
    ax.set_title(
        f"{KIND_TITLES.get(first['kind'], first['kind'])}, h = {first['history']}\n"
        f"n = {int(first['n_obs'])}, stories = {int(first['n_stories'])}",
        fontsize=8,
    )
    ax.tick_params(labelsize=7)
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel("estimate (nats/token per SD or per indicator)", fontsize=7)
