"""Plot-hole figures: CEEval-Full by detector (with the baselines), and by story length."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from storyflow.figures.common import save

KIND_COLOURS = {"baseline": "0.6", "surprisal": "C1", "nli": "C2", "model": "C0"}


def plot_ceeval(scores: pd.DataFrame, paths: Sequence[str | Path], dpi: int) -> None:
    """One panel per maker: CEEval-Full of each detector (share 0-1) with its bootstrap CI;
    the dashed line is 0.5, the always-no baseline on a balanced set."""
    makers = sorted(scores["maker"].unique()) or ["none"]
    fig, axes = plt.subplots(1, len(makers), figsize=(4.5 * len(makers), 3.2), squeeze=False)
    for ax, maker in zip(axes[0], makers, strict=True):
        s = scores[scores["maker"] == maker].sort_values(["kind", "detector"])
        y = np.arange(len(s))
        value = s["ceeval_full"].to_numpy(float)
        err = np.vstack([value - s["ceeval_ci_low"], s["ceeval_ci_high"] - value])
        colours = [KIND_COLOURS.get(k, "C0") for k in s["kind"]]
        ax.barh(y, np.nan_to_num(value), xerr=np.nan_to_num(err), color=colours, capsize=2)
        ax.set_yticks(y, s["detector"], fontsize=7)
        ax.axvline(0.5, ls="--", color="k", lw=0.8)
        ax.set_xlim(0, 1)
        ax.set_xlabel("CEEval-Full (share of stories)")
        ax.set_title(f"{maker} maker (n = {int(s['n'].max()) if len(s) else 0})", fontsize=9)
    fig.tight_layout()
    save(fig, paths, dpi)


def plot_ceeval_by_length(
    answers: pd.DataFrame, made: pd.DataFrame, paths: Sequence[str | Path], dpi: int, bins: int = 3
) -> None:
    """Mean CEEval-Full per detector against story length (words of the original, in equal-count
    bins; each point: the bin's median length)."""
    shown = answers[(answers["maker"] != "original") & answers["version"].isin(["O", "F"])]
    words = made.drop_duplicates("story_id").set_index("story_id")["original"].str.split().str.len()
    data = shown.assign(words=shown["story_id"].map(words))
    fig, ax = plt.subplots(figsize=(5, 3.2))
    if len(data) and data["words"].nunique() > 1:
        data["bin"] = pd.qcut(
            data["words"], q=min(bins, data["words"].nunique()), duplicates="drop"
        )
        for detector, g in data.groupby("detector", sort=True):
            m = g.groupby("bin", observed=True).agg(
                words=("words", "median"), ceeval=("ceeval", "mean")
            )
            ax.plot(m["words"], m["ceeval"], marker="o", label=detector)
        ax.legend(fontsize=6)
    ax.set_xlabel("story length (words)")
    ax.set_ylabel("CEEval-Full")
    ax.set_ylim(0, 1)
    fig.tight_layout()
    save(fig, paths, dpi)
