"""What every figure shares: colours per story type and contrast, font size, saving.

Rendering uses matplotlib's Agg canvas directly (no pyplot, no global figure state); every path
given is written, in the format its extension names (``.png``, ``.pdf``, ...).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine, TightLayoutEngine
from matplotlib.text import Text
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


def save(fig: Figure, paths: Sequence[str | Path], dpi: int) -> Figure:
    """Write ``fig`` to every path (format from the extension; the folders must exist: a rule's
    declared outputs, whose folders Snakemake makes) at ``dpi``, fitted first (:func:`fit`): no
    title, label or legend is cut off. Returns the figure as written."""
    fit(fig)
    for path in paths:
        fig.savefig(Path(path), dpi=dpi)
    return fig


def renderer(fig: Figure) -> RendererAgg:
    """An Agg renderer for ``fig`` (its canvas made an Agg canvas if it is not one)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    return canvas.get_renderer()  # type: ignore[no-untyped-call]


def fit(fig: Figure) -> None:
    """Make everything ``fig`` draws lie inside it, at any number of panels.

    Titles wider than their panel (figure-level titles: than the figure) are wrapped at word
    boundaries; then, while anything still reaches past an edge (a long tick label, a legend
    placed outside the panels, a figure title), the figure grows by the overflow on that side,
    the panels keeping their size and place relative to one another. A figure with a layout
    engine (constrained layout) lays itself out again at the new size.
    """
    fig.draw_without_rendering()
    _wrap_titles(fig, renderer(fig))
    for _ in range(4):
        fig.draw_without_rendering()
        width, height = fig.get_size_inches()
        box = fig.get_tightbbox(renderer(fig))  # inches
        pad = 2 / fig.dpi
        left, bottom = max(0.0, -box.x0), max(0.0, -box.y0)
        right, top = max(0.0, box.x1 - width), max(0.0, box.y1 - height)
        if max(left, bottom, right, top) <= 0.5 / fig.dpi:
            return
        left, bottom = (left + pad if left else 0.0), (bottom + pad if bottom else 0.0)
        right, top = (right + pad if right else 0.0), (top + pad if top else 0.0)
        _grow(fig, left, bottom, width + left + right, height + bottom + top)


def _grow(fig: Figure, left: float, bottom: float, new_width: float, new_height: float) -> None:
    """Resize ``fig`` to ``new_width`` x ``new_height`` inches with what it draws moved
    ``left`` and ``bottom`` inches right and up (a layout engine places the panels itself)."""
    width, height = fig.get_size_inches()

    def moved(x: float, y: float) -> tuple[float, float]:
        return (x * width + left) / new_width, (y * height + bottom) / new_height

    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine | TightLayoutEngine):
        # no engine, or the placeholder a one-off ``fig.tight_layout()`` leaves: panels stay
        for ax in fig.axes:
            pos = ax.get_position(original=False)
            x0, y0 = moved(pos.x0, pos.y0)
            box = (x0, y0, pos.width * width / new_width, pos.height * height / new_height)
            ax.set_position(box, which="both")
        for text in fig.texts:
            if text.get_transform() == fig.transFigure:
                text.set_position(moved(*text.get_position()))
    fig.set_size_inches(new_width, new_height)


def _wrap_titles(fig: Figure, drawer: RendererAgg) -> None:
    """Wrap every title longer than the room it has: a panel's title to the panel's width, a
    vertical label beside a panel (a row's name) to the panel's height, a figure's title
    (suptitle, supxlabel, any text placed on the figure) and a legend's title to the
    figure's width."""
    for ax in fig.axes:
        width, height = _room(fig, ax, drawer)
        for slot in ("title", "_left_title", "_right_title"):  # centre, left, right titles
            _wrap(getattr(ax, slot), width, drawer)
        for text in ax.texts:
            if _vertical(text):
                _wrap(text, height, drawer)
    for text in fig.texts:
        _wrap(text, 0.96 * (fig.bbox.height if _vertical(text) else fig.bbox.width), drawer)
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if legend is not None:
            _wrap(legend.get_title(), 0.96 * fig.bbox.width, drawer)


def _room(fig: Figure, ax: Axes, drawer: RendererAgg) -> tuple[float, float]:
    """A panel's width and height in pixels as drawn; where a layout engine squeezed it to
    less than half its grid cell (a label too long for it), 0.8 of the cell's."""
    drawn = ax.get_window_extent(drawer)
    spec = ax.get_subplotspec()
    if spec is None:
        return drawn.width, drawn.height
    cell = spec.get_position(fig)
    full = (cell.width * fig.bbox.width, cell.height * fig.bbox.height)
    return (
        drawn.width if drawn.width >= full[0] / 2 else 0.8 * full[0],
        drawn.height if drawn.height >= full[1] / 2 else 0.8 * full[1],
    )


def _vertical(text: Text) -> bool:
    return round(text.get_rotation()) % 180 == 90


def _wrap(text: Text, room: float, drawer: RendererAgg) -> None:
    """Wrap ``text`` at spaces and hyphens (inside a word only when one word is too long)
    until it is at most ``room`` pixels long along its direction."""
    content = text.get_text()
    if not content or not text.get_visible():
        return
    for _ in range(8):
        extent = text.get_window_extent(drawer)
        length = extent.height if _vertical(text) else extent.width
        if length <= room:
            return
        longest = max(len(line) for line in content.split("\n"))
        chars = int(longest * room / length)
        if chars < 8:
            return
        content = "\n".join(textwrap.fill(line, chars) for line in content.split("\n"))
        text.set_text(content)
