"""What every figure shares: colours per story type and contrast, font size, saving.

Rendering uses matplotlib's Agg canvas directly (no pyplot, no global figure state); every path
given is written, in the format its extension names (``.png``, ``.pdf``, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.typing import ColorType

from storyflow.settings import FromParams

STORY_TYPE_COLORS = {
    "recalled": "#1f77b4",
    "retold": "#2ca02c",
    "imagined": "#d62728",
    "autobiography": "#1f77b4",
    "biography": "#17becf",
    "fiction-1P": "#d62728",
    "fiction-3P": "#ff7f0e",
    "fiction-unclear": "#bcbd22",
    "nonnarrative": "#7f7f7f",
}
_FALLBACK = [colormaps["tab10"](i) for i in range(10)] + [colormaps["Dark2"](i) for i in range(8)]
_CONTRAST_PALETTE = [colormaps["Dark2"](i) for i in range(8)]
FONT_SIZE = 8


@dataclass(frozen=True)
class FigureSettings(FromParams):
    """How a figure of panels is drawn (config ``figures``, a rule's params through
    :func:`storyflow.plan.figure_settings`): ``dpi``, the resolution of raster formats, and
    each panel's ``width_per_panel`` and ``height_per_panel`` in inches."""

    WHERE = "figures"

    dpi: int
    width_per_panel: float
    height_per_panel: float


def story_type_colors(story_types: Iterable[str]) -> dict[str, ColorType]:
    """Colour per story type: fixed for known types, the next unused palette colour otherwise.

    Deterministic: the same set of story types always gets the same colours.
    """
    types = sorted(set(story_types))
    colors: dict[str, ColorType] = {
        t: STORY_TYPE_COLORS[t] for t in types if t in STORY_TYPE_COLORS
    }
    free = [c for c in _FALLBACK if c not in colors.values()]
    for i, t in enumerate(t for t in types if t not in colors):
        colors[t] = free[i % len(free)]
    return colors


def contrast_colors(contrasts: Sequence[str]) -> dict[str, ColorType]:
    """Colour per contrast, in the given order (the config's order)."""
    return {c: _CONTRAST_PALETTE[i % len(_CONTRAST_PALETTE)] for i, c in enumerate(contrasts)}


def unique(values: Iterable[str]) -> list[str]:
    """Distinct values in order of first appearance."""
    return list(dict.fromkeys(values))


def save(fig: Figure, paths: Sequence[str | Path], dpi: int) -> None:
    """Write ``fig`` to every path (format from the extension; the folders must exist: a rule's
    declared outputs, whose folders Snakemake makes) at ``dpi``."""
    for path in paths:
        fig.savefig(Path(path), dpi=dpi)
