"""Rule build_story_explorer: the corpus's story explorer, one self-contained HTML page."""

import logging

from storyflow.explorer import gather, write
from storyflow.explorer.gather import read_sources
from storyflow.runner import run

log = logging.getLogger("storyflow.explorer")


def main(smk):
    explorer = gather(smk.wildcards.corpus, read_sources(dict(smk.input.items())))
    size = write(explorer, smk.output.page)
    log.info("%d stories, %.1f MB", len(explorer.details), size / 1e6)


run(main, snakemake)
