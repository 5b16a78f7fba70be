"""Plot-hole figures: CEEval-Full by detector (with the baselines), and by story length.

A detector that failed its validity check (``valid`` False in the scores:
results/plot_holes/tables/validity.csv) is drawn hollow and grey, its label naming the failed
checks; a baseline is hatched (the reference, not checked). Every value has its interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from storyflow.figures.common import save
from storyflow.validity import wilson_interval

KIND_COLOURS = {"baseline": "0.6", "surprisal": "C1", "nli": "C2", "model": "C0"}
FAILED = "0.55"


def _failed(valid: object) -> bool:
    """Whether a ``valid`` cell says the detector failed its check (empty: not checked)."""
    return str(valid) == "False"  # bool, numpy bool or the text read back from a CSV


def _label(row: pd.Series) -> str:
    if _failed(row.get("valid")):
        return f"{row['detector']} (failed: {str(row['validity']).removeprefix('failed: ')})"
    return str(row["detector"])


def plot_ceeval(scores: pd.DataFrame, paths: Sequence[str | Path], dpi: int) -> Figure:
    """One panel per maker: CEEval-Full of each detector (share 0-1) with its bootstrap CI;
    the dashed line is 0.5, the always-no baseline on a balanced set. Detectors that failed
    their validity check are hollow and grey; baselines are hatched. Returns the figure."""
    makers = sorted(scores["maker"].unique()) or ["none"]
    fig = Figure(figsize=(5.5 * len(makers), 0.9 + 0.32 * max(3, scores["detector"].nunique())))
    axes = fig.subplots(1, len(makers), squeeze=False)
    any_failed = False
    for ax, maker in zip(axes[0], makers, strict=True):
        s = scores[scores["maker"] == maker].sort_values(["kind", "detector"])
        for y, (_, row) in enumerate(s.iterrows()):
            value = float(row["ceeval_full"])
            low, high = float(row["ceeval_ci_low"]), float(row["ceeval_ci_high"])
            failed = _failed(row.get("valid"))
            any_failed |= failed
            colour = KIND_COLOURS.get(row["kind"], "C0")
            ax.barh(
                y,
                0 if np.isnan(value) else value,
                color="none" if failed else colour,
                edgecolor=FAILED if failed else colour,
                hatch="//" if row["kind"] == "baseline" else None,
                linewidth=1.2,
            )
            if not (np.isnan(low) or np.isnan(value)):
                ax.errorbar(
                    value,
                    y,
                    xerr=[[value - low], [high - value]],
                    color=FAILED if failed else "k",
                    capsize=2,
                    lw=0.8,
                )
            if np.isnan(value):
                ax.text(0.01, y, "no score", va="center", fontsize=6)
        ax.set_yticks(range(len(s)), [_label(r) for _, r in s.iterrows()], fontsize=6)
        ax.axvline(0.5, ls="--", color="k", lw=0.8)
        ax.set_xlim(0, 1)
        ax.set_xlabel("CEEval-Full (share of stories, 95% CI)")
        ax.set_title(f"{maker} maker (n = {int(s['n'].max()) if len(s) else 0})", fontsize=9)
    handles = [Patch(facecolor=c, label=k) for k, c in KIND_COLOURS.items() if k != "baseline"]
    handles.append(Patch(facecolor="0.6", hatch="//", label="baseline (not checked)"))
    if any_failed:
        handles.append(
            Patch(
                facecolor="none",
                edgecolor=FAILED,
                label="hollow: failed its validity check (results/plot_holes/tables/validity.csv)",
            )
        )
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=6, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    save(fig, paths, dpi)
    return fig


def length_bins(
    answers: pd.DataFrame, made: pd.DataFrame, confidence: float, bins: int = 3
) -> pd.DataFrame:
    """Per detector and bin of story length (words of the original, equal-count bins): the
    median length, the mean CEEval-Full (share) with its Wilson interval, and n versions."""
    shown = answers[
        (answers["maker"] != "original")
        & answers["version"].isin(["O", "F"])
        & (answers["answer_status"] != "too_long")
    ]
    words = made.drop_duplicates("story_id").set_index("story_id")["original"].str.split().str.len()
    data = shown.assign(words=shown["story_id"].map(words))
    columns = ["detector", "words", "ceeval", "ci_low", "ci_high", "n"]
    if data.empty or data["words"].nunique() < 2:
        return pd.DataFrame(columns=columns)
    data["bin"] = pd.qcut(data["words"], q=min(bins, data["words"].nunique()), duplicates="drop")
    rows = []
    for (detector, _), g in data.groupby(["detector", "bin"], observed=True, sort=True):
        hits, n = int(g["ceeval"].sum()), len(g)
        low, high = wilson_interval(hits, n, confidence)
        rows.append((detector, float(g["words"].median()), hits / n, low, high, n))
    return pd.DataFrame(rows, columns=columns)


def plot_ceeval_by_length(
    answers: pd.DataFrame,
    made: pd.DataFrame,
    paths: Sequence[str | Path],
    dpi: int,
    *,
    confidence: float,
    scores: pd.DataFrame | None = None,
    bins: int = 3,
) -> None:
    """Mean CEEval-Full per detector against story length (words of the original, in
    equal-count bins; each point: the bin's median length), with Wilson intervals at
    ``confidence``; detectors that failed their validity check (``scores``' ``valid``) are grey
    with hollow markers."""
    table = length_bins(answers, made, confidence, bins=bins)
    failed = set()
    if scores is not None and "valid" in scores:
        failed = {d for d, v in zip(scores["detector"], scores["valid"], strict=True) if _failed(v)}
    fig = Figure(figsize=(5.5, 3.4))
    ax = fig.subplots()
    for i, (detector, g) in enumerate(table.groupby("detector", sort=True)):
        bad = detector in failed
        colour = FAILED if bad else f"C{i % 10}"
        ax.errorbar(
            g["words"] + (i - table["detector"].nunique() / 2) * 2,  # dodge overlapping bars
            g["ceeval"],
            yerr=[g["ceeval"] - g["ci_low"], g["ci_high"] - g["ceeval"]],
            marker="o",
            mfc="none" if bad else colour,
            color=colour,
            ls="--" if bad else "-",
            capsize=2,
            lw=0.9,
            label=f"{detector} (failed its validity check)" if bad else detector,
        )
    if len(table):
        ax.legend(fontsize=6)
    ax.set_xlabel("story length (words, bin median)")
    ax.set_ylabel("CEEval-Full (95% Wilson CI)")
    ax.set_ylim(0, 1)
    fig.tight_layout()
    save(fig, paths, dpi)
