"""The story explorer's page: one HTML file with its data, script and style inlined.

The page needs no network and no server: it opens from a file and inside the Snakemake report
(which shows an HTML result in a frame). Its data are two inline blocks: the index (JSON,
parsed when the page opens) and the stories' details (one JSON line per story, in the index's
order; the page splits the block and parses a line only when its story is selected), so a
corpus of thousands of stories opens as fast as its table. The script (``data/explorer.js``)
and the style (``data/explorer.css``) are the package's own files, written by hand: no
JavaScript library.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from storyflow.explorer.gather import Explorer

#: The page's script and style, package data of storyflow.
SCRIPT = "explorer.js"
STYLE = "explorer.css"


def _asset(name: str) -> str:
    return resources.files("storyflow").joinpath("data", name).read_text(encoding="utf-8")


def inline_json(value: Any) -> str:
    """``value`` as compact JSON that is safe inside a ``<script>`` element: every ``<``
    (which could close the element or open a comment) written as ``\\u003c``, and no line
    break outside the strings' escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render(explorer: Explorer) -> str:
    """The page of ``explorer`` (see the module docstring)."""
    corpus = html.escape(str(explorer.index["corpus"]))
    details = "\n".join(inline_json(d) for d in explorer.details)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>storyflow story explorer: {corpus}</title>\n"
        f"<style>\n{_asset(STYLE)}</style>\n"
        "</head><body>\n"
        '<div id="app"><p id="loading">Loading the story explorer...</p></div>\n'
        f'<script id="explorer-index" type="application/json">{inline_json(explorer.index)}'
        "</script>\n"
        f'<script id="explorer-details" type="text/plain">{details}</script>\n'
        f"<script>\n{_asset(SCRIPT)}</script>\n"
        "</body></html>\n"
    )


def write(explorer: Explorer, path: str | Path) -> int:
    """Write the page of ``explorer`` to ``path``; its size in bytes."""
    text = render(explorer)
    Path(path).write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))
