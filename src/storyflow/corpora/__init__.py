"""The corpus registry: one place that knows every corpus storyflow reads.

A corpus has a *kind* (how its file is read) and a *name* (how the config and the result folders
call it). The built-in corpora are named after their kind; users add their own stories as
corpora of kind ``csv`` under the config's ``corpora:`` block. For each kind the registry knows

- its reader, which returns the stories (:data:`storyflow.tables.STORIES`; ``story_type`` is the
  corpus's grouping label) and the stories it excluded (:data:`storyflow.tables.EXCLUDED`);
- its extra label columns (besides ``story_type``);
- the config key naming its file (inside ``data.mirror`` unless absolute) and, where one exists,
  the config key of its download URL; otherwise how to get the file by hand.

The Snakemake rules ask the registry for a corpus's file (:func:`source_file`) and the library
asks it for the corpus's stories (:func:`read_texts`), so adding a corpus kind means adding one
entry here and its reader module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError


@dataclass(frozen=True)
class CorpusKind:
    """How one kind of corpus is found and read.

    ``path_key``: the config keys leading to its file (relative paths are inside the data
    mirror); ``url_key``: those leading to its download URL (None: no public download);
    ``labels``: label columns its stories carry besides ``story_type``; ``split``: whether its
    reader returns stories already split into sentences (book passages) rather than texts;
    ``downloaded``: whether, with no data mirror, a rule downloads the file ``path_key`` names
    (HIPPOCORPUS's release; the books' ``url_key`` fetches the books, not their manifest).
    ``group_word``: what its ``story_type`` label is called where a reader sees it (see
    :func:`group_word`).
    """

    kind: str
    description: str
    path_key: tuple[str, ...]
    url_key: tuple[str, ...] | None
    labels: tuple[str, ...]
    split: bool
    read_texts: Callable[[Path, Mapping[str, Any]], pd.DataFrame]
    downloaded: bool = False
    group_word: str = "story type"


def _hippocorpus_texts(path: Path, settings: Mapping[str, Any]) -> pd.DataFrame:
    from storyflow.corpora.hippocorpus import read_hippocorpus_stories

    return read_hippocorpus_stories(path, settings["story_types"], settings.get("limit"))


def _books_texts(path: Path, settings: Mapping[str, Any]) -> pd.DataFrame:
    from storyflow.corpora.base import limit_groups
    from storyflow.corpora.books import book_passages, read_manifest

    columns = settings["columns"]
    manifest = read_manifest(
        path,
        id_column=columns["id"],
        genre_column=columns["genre"],
        path_column=columns["path"],
        path_template=settings["path_template"],
    )
    return book_passages(
        limit_groups(manifest, settings.get("limit"), by="genre"),
        per_book=settings["books"]["passages_per_book"],
        tokens=settings["books"]["tokens"],
        seed=int(settings["seed"]),
    )


def _hanna_texts(path: Path, settings: Mapping[str, Any]) -> pd.DataFrame:
    import logging

    from storyflow.corpora.hanna import read_hanna

    stories, counts = read_hanna(path, settings.get("limit"))
    log = logging.getLogger(__name__)
    no_model = stories["group"] == ""
    if no_model.any():
        log.warning(
            "%s: %d stories with an empty Model cell left out (in no group), CSV row(s) %s",
            path,
            int(no_model.sum()),
            ", ".join(map(str, stories.loc[no_model, "row"].iloc[:5])),
        )
        stories, counts = stories[~no_model], counts[counts["group"] != ""]
    for row in counts.itertuples(index=False):
        log.info(
            "HANNA %s: %d stories, %d with a speaker label (kept as written)",
            row.group,
            row.n_stories,
            row.n_artefact,
        )
    return stories[["story_id", "group", "text", "prompt_id", "artefact"]]


def _rocstories_texts(path: Path, settings: Mapping[str, Any]) -> pd.DataFrame:
    from storyflow.corpora.rocstories import read_rocstories

    return read_rocstories(path, settings.get("limit"))[["story_id", "group", "text"]]


def _csv_texts(path: Path, settings: Mapping[str, Any]) -> pd.DataFrame:
    from storyflow.corpora.base import limit_groups
    from storyflow.corpora.user_csv import read_csv_stories

    stories, _ = read_csv_stories(path, settings["columns"])
    texts = stories.rename(columns={"story_type": "group"})[["story_id", "group", "text"]]
    return limit_groups(texts, settings.get("limit"))


KINDS: dict[str, CorpusKind] = {
    kind.kind: kind
    for kind in (
        CorpusKind(
            "hippocorpus",
            "HIPPOCORPUS (Sap et al. 2020): recalled, imagined and retold diary stories",
            ("hippocorpus", "mirror_path"),
            ("hippocorpus", "url"),
            (),
            False,
            _hippocorpus_texts,
            downloaded=True,
        ),
        CorpusKind(
            "books",
            "public-domain books by genre (a manifest of labelled plain-text books)",
            ("books", "manifest"),
            ("books", "url"),
            ("genre", "pov"),
            True,
            _books_texts,
        ),
        CorpusKind(
            "hanna",
            "HANNA (Chhun et al. 2022): a human and six LLMs' stories for 96 prompts",
            ("narrative_sense", "hanna"),
            None,
            ("prompt_id", "artefact"),
            False,
            _hanna_texts,
        ),
        CorpusKind(
            "rocstories",
            "ROCStories cloze test (Mostafazadeh et al. 2016): five-sentence stories",
            ("narrative_sense", "rocstories"),
            None,
            (),
            False,
            _rocstories_texts,
        ),
        CorpusKind(
            "csv",
            "a user's CSV of stories (id, text, group and optional topic columns from config)",
            ("corpora", "<name>", "path"),
            None,
            (),
            False,
            _csv_texts,
            group_word="group",
        ),
    )
}


def corpus_kind(config: Mapping[str, Any], name: str) -> CorpusKind:
    """The kind of corpus ``name``: a built-in name, or a ``corpora:`` entry of the config."""
    if name in KINDS and name != "csv":
        return KINDS[name]
    user = config["corpora"].get(name)  # the user's corpora (the schema's default: none)
    if user is None:
        known = sorted({*(k for k in KINDS if k != "csv"), *config["corpora"]})
        raise StoryflowError(
            f"config: unknown corpus {name!r}; known corpora: {', '.join(known)} (add your own "
            "under `corpora:` with kind: csv)"
        )
    return KINDS[user["kind"]]


def group_word(config: Mapping[str, Any], name: str) -> str:
    """What corpus ``name``'s grouping label is called in figures and messages: "story type"
    for the built-in corpora (HIPPOCORPUS's imagined, recalled and retold, the books' passage
    types ...), "group" for a user's CSV corpus, whose groups are whatever its group column holds.

    The tables a reader opens name the column the same way (:func:`label_column`).
    """
    return corpus_kind(config, name).group_word


def label_column(config: Mapping[str, Any], name: str) -> str:
    """The grouping label's column in the CSV tables of corpus ``name`` a reader opens:
    ``group`` for a user's CSV corpus, ``story_type`` for the built-in corpora. The pipeline's
    own files (Parquet) keep ``story_type``; :func:`storyflow.tables.read` reads either name."""
    return "group" if corpus_kind(config, name).kind == "csv" else tables.LABEL


def corpus_names(config: Mapping[str, Any]) -> list[str]:
    """Every corpus the config can use: the built-in ones, then the user's in config order."""
    return [k for k in KINDS if k != "csv"] + list(config["corpora"])


def _lookup(config: Mapping[str, Any], keys: tuple[str, ...], name: str) -> Any:
    value: Any = config
    for key in keys:
        value = value[name if key == "<name>" else key]
    return value


def configured_path(config: Mapping[str, Any], name: str) -> Path:
    """Corpus ``name``'s file as configured. A public corpus's relative path is inside
    ``data.mirror`` (relative to the working directory when there is no mirror); a CSV corpus
    of your own is never in the mirror of public data, so its relative path is relative to the
    working directory, the folder snakemake runs in."""
    kind = corpus_kind(config, name)
    relative = Path(_lookup(config, kind.path_key, name))
    mirror = config["data"]["mirror"]
    if relative.is_absolute() or not mirror or kind.kind == "csv":
        return relative
    return Path(mirror) / relative


def download_url(config: Mapping[str, Any], name: str) -> str | None:
    """The URL corpus ``name`` is downloaded from, or None when it has no public download."""
    keys = corpus_kind(config, name).url_key
    return None if keys is None else str(_lookup(config, keys, name))


def read_texts(
    config_or_kind: Mapping[str, Any] | str,
    name: str,
    path: str | Path,
    settings: Mapping[str, Any],
) -> pd.DataFrame:
    """Corpus ``name``'s stories as texts with their group: story_id, group, text, labels.

    ``config_or_kind``: the config (to resolve a user corpus's kind) or the kind itself.
    ``settings``: what the kind's reader needs (``limit`` per group, story types, columns ...).
    """
    kind = (
        KINDS[config_or_kind]
        if isinstance(config_or_kind, str)
        else corpus_kind(config_or_kind, name)
    )
    return kind.read_texts(Path(path), settings)
