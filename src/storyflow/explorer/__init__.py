"""The story explorer (docs/explorer.md): one self-contained HTML page per corpus that shows
every story's measures in a table and, for the story a reader selects, its text shaded by
sentence sequentiality, its NLL curves, its tension curves, its fabula-entropy answers and its
plot-hole edits with each detector's answer.

:mod:`storyflow.explorer.gather` turns the run's tables into the page's data (numbers rounded,
texts once); :mod:`storyflow.explorer.page` writes the page (the data, the script and the style
inlined: it opens from a file or inside the Snakemake report with no network). Nothing in the
library imports this package: it reads the measures' tables as files, like the comparison.
"""

from storyflow.explorer.gather import Sources, gather
from storyflow.explorer.page import render, write

__all__ = ["Sources", "gather", "render", "write"]
