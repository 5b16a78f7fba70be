"""The antonym lexicon of the EWC corruption (``storyflow/data/antonyms.tsv``).

No English wordnet with antonym relations installs offline from PyPI (the ``wn`` package
downloads its data from the web; NLTK's data is not on PyPI), so storyflow ships a small lexicon
of common adjective and adverb opposites, written for it in the style of WordNet's direct
antonyms (the file's header says so). A user may pass a lexicon of their own with the same
columns (word, antonym, pos).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from storyflow.corpora.base import read_csv_text
from storyflow.errors import StoryflowError

COLUMNS = ("word", "antonym", "pos")


def packaged_lexicon() -> Path:
    """The lexicon shipped with storyflow."""
    return Path(str(resources.files("storyflow") / "data" / "antonyms.tsv"))


def load_antonyms(path: str | Path | None = None) -> dict[tuple[str, str], list[str]]:
    """(lower-case word, POS "ADJ" or "ADV") → its antonyms, each pair in both directions."""
    source = Path(path) if path else packaged_lexicon()
    if not source.is_file():
        raise StoryflowError(f"antonym lexicon {source} does not exist")
    table = read_csv_text(source, sep="\t", comment="#")
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise StoryflowError(
            f"antonym lexicon {source}: missing columns {missing}; found {list(table.columns)}"
        )
    lexicon: dict[tuple[str, str], list[str]] = {}
    for word, antonym, pos in table[list(COLUMNS)].itertuples(index=False):
        for a, b in ((word, antonym), (antonym, word)):
            options = lexicon.setdefault((a.lower(), pos), [])
            if b.lower() not in options:
                options.append(b.lower())
    return lexicon
