"""Figure of the narrative-sense pair scores (PMI) per group."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from storyflow.figures.common import FONT_SIZE, save, story_type_colors, unique


def plot_pair_scores(
    scores: pd.DataFrame,
    paths: Sequence[str | Path],
    *,
    top_pairs: int,
    dpi: int,
    seed: int,
    max_points: int = 200_000,
) -> None:
    """Narrative-sense pair scores (PMI, natural log) per group: all pairs and top pairs.

    ``scores`` has ``group`` and ``pair_pmi`` (each story's pair scores, descending), from
    :func:`storyflow.measures.narrative_sense.pmi.score_stories`; when it has ``included``
    (the short-set filter's verdict), only included stories are drawn. Left panel: every pair of
    every story of the group; right: each story's ``top_pairs`` highest. One violin per group
    (at most ``max_points`` scores drawn per group, seeded, for drawing only); the white bar
    marks the median of all the group's scores.
    """
    if "included" in scores:
        scores = scores[scores["included"].astype(bool)]
    groups = unique(scores["group"].astype(str))
    colors = story_type_colors(groups)
    rng = np.random.default_rng(seed)
    fig = Figure(figsize=(max(6.0, 1.2 * len(groups) + 1.5), 3.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, (title, k) in zip(
        axes, [("all pairs", None), (f"top {top_pairs} pairs", top_pairs)], strict=False
    ):
        for x, group in enumerate(groups):
            values = np.concatenate(
                [np.asarray(v)[:k] for v in scores.loc[scores["group"] == group, "pair_pmi"]]
                or [np.zeros(0)]
            )
            if len(values) == 0:
                continue
            median = float(np.median(values))
            if len(values) > max_points:
                values = rng.choice(values, max_points, replace=False)
            if len(values) > 1 and np.ptp(values) > 0:
                parts = ax.violinplot(values, positions=[x], showextrema=False, widths=0.8)
                for body in parts["bodies"]:
                    body.set_facecolor(colors[group])
                    body.set_alpha(0.6)
            ax.hlines(median, x - 0.3, x + 0.3, color="black", linewidth=2)
            ax.annotate(
                f"{median:.2f}",
                (x, median),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                fontsize=FONT_SIZE - 1,
            )
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=FONT_SIZE)
        ax.set_title(title, fontsize=FONT_SIZE + 1)
        ax.tick_params(labelsize=FONT_SIZE)
    axes[0].set_ylabel("pair score: PMI = ln(c12 / (c1 c2))", fontsize=FONT_SIZE)
    fig.tight_layout()
    save(fig, paths, dpi)
