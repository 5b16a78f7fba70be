"""Reading, validating, sampling and downloading HIPPOCORPUS (Sap et al. 2020).

The corpus is a CSV shaped like the official ``hippoCorpusV2.csv``: one record per story, with
(among others) the columns ``AssignmentId`` (the story's unique id), ``memType`` (``recalled``,
``imagined`` or ``retold``), ``story`` (the text) and ``summary`` (the writer's short description
of the event, used as the "topic" of the topic formulation of sequentiality).

Row numbers in messages and tables count CSV records as a spreadsheet shows them: the header is
row 1 and the first story is row 2 (a story whose text spans several lines is still one row).
"""

from __future__ import annotations

import io
import logging
import re
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.corpora.base import (
    LETTER,
    NO_LETTERS,
    decode_text,
    limit_groups,
    require_header,
)
from storyflow.corpora.download import fetch
from storyflow.errors import InputDataError, StoryflowError

log = logging.getLogger(__name__)

#: Columns of the CSV that storyflow needs (the official file has more; they are ignored).
REQUIRED_COLUMNS = ("AssignmentId", "memType", "story", "summary")

#: The columns that pair a story with the recalled story it was written from (an imagined
#: story: the recalled one whose summary its writer was shown) or that it retells (a retold
#: story), read where the file has them: each story's ``block`` is that recalled story's id (a
#: recalled story's own), so a recalled story and its imagined and retold pairs are matched.
PAIR_COLUMNS = {"imagined": "recImgPairId", "retold": "recAgnPairId"}
#: The story type the pairs point to.
PAIRED_TO = "recalled"

#: Columns of the stories table returned by :func:`read_hippocorpus`.
STORY_COLUMNS = tuple(tables.STORIES.names)

#: Columns of the excluded-stories table returned by :func:`read_hippocorpus`.
EXCLUDED_COLUMNS = tuple(tables.EXCLUDED.names)

#: Columns of the table returned by :func:`sample_counts`.
COUNT_COLUMNS = tuple(tables.SAMPLE_COUNTS.names)

#: How many offending rows an error message lists before saying "and N more".
MAX_REPORTED = 5

#: Row number (header = row 1) of the first data record.
_FIRST_DATA_ROW = 2


def _row_list(rows: Sequence[int], labels: Sequence[str] | None = None) -> str:
    """``"rows 3 ('a'), 7 ('b')"``: the first :data:`MAX_REPORTED` rows, then how many more."""
    items = [
        f"{row}" if labels is None else f"{row} ({labels[i]!r})"
        for i, row in enumerate(rows[:MAX_REPORTED])
    ]
    text = ("row " if len(rows) == 1 else "rows ") + ", ".join(items)
    if len(rows) > MAX_REPORTED:
        text += f" and {len(rows) - MAX_REPORTED} more"
    return text


def _read_utf8(path: Path) -> str:
    """The file's text (:func:`storyflow.corpora.base.decode_text`: UTF-8, or the encoding a
    byte-order mark names; the mark is dropped)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputDataError(path, "file not found") from None
    except OSError as err:
        raise InputDataError(path, f"cannot read the file ({err.strerror or err})") from None
    return decode_text(data, path)


def _read_table(path: Path) -> pd.DataFrame:
    """Parse the CSV with pandas, every cell as text ("" for an empty cell, never NaN)."""
    text = _read_utf8(path)
    try:
        table = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise InputDataError(path, "the file is empty (no header row)") from None
    except pd.errors.ParserError as err:
        found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(err))
        if found is None:
            raise InputDataError(path, f"not a well-formed CSV file ({err})") from None
        expected, row, seen = map(int, found.groups())
        raise InputDataError(path, _too_many_fields(seen, expected), row=row) from None
    if not isinstance(table.index, pd.RangeIndex):
        # pandas takes a first data row with one field more than the header as an index column
        raise InputDataError(path, _too_many_fields(len(table.columns) + 1, len(table.columns)), 2)
    table.columns = [str(c).strip() for c in table.columns]
    return table


def _too_many_fields(seen: int, expected: int) -> str:
    return (
        f"not a well-formed CSV file: this row has {seen} fields but the header has {expected}. "
        'A field that contains a comma, quote or line break must be enclosed in double quotes ("), '
        "with inner quotes doubled."
    )


def read_hippocorpus(
    path: str | Path, story_types: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read and validate a HIPPOCORPUS CSV; return ``(stories, excluded)``.

    Args:
        path: CSV shaped like the official ``hippoCorpusV2.csv`` (UTF-8, header row, columns
            ``AssignmentId``, ``memType``, ``story``, ``summary``; other columns are ignored).
        story_types: Allowed ``memType`` values (e.g. recalled, retold, imagined).

    Returns:
        ``stories``, one row per usable story in file order, columns

        * ``story_id`` (str): the story's ``AssignmentId``, unique;
        * ``story_type`` (str): its ``memType``, one of ``story_types``;
        * ``text`` (str): the story as written;
        * ``topic`` (str or None): the ``summary`` stripped of outer whitespace, None when the
          summary is empty (the topic formulation skips such stories, context-only keeps them);
        * ``has_topic`` (bool): whether ``topic`` is present;
        * ``block`` (str or None): the id of the recalled story the story is paired with
          (:data:`PAIR_COLUMNS`), which matches it with that story's other pairs.

        ``excluded``, one row per story left out, columns ``story_id``, ``story_type``, ``row``
        (int, the CSV row: header = 1, first story = 2) and ``reason`` (e.g. ``"empty story"``).

    Raises:
        InputDataError: the file is missing, not UTF-8, not a CSV, lacks a required column, or has
            an empty or duplicate ``AssignmentId`` or a ``memType`` outside ``story_types``. The
            message names the file, the offending rows and what to do.
    """
    path = Path(path)
    table = _read_table(path)
    require_header(
        table,
        REQUIRED_COLUMNS,
        path,
        f"Expected the columns of hippoCorpusV2.csv, including {', '.join(REQUIRED_COLUMNS)}.",
    )
    rows = pd.RangeIndex(_FIRST_DATA_ROW, _FIRST_DATA_ROW + len(table))
    ids = table["AssignmentId"].str.strip()
    types = table["memType"].str.strip()
    _check_ids(path, ids, rows)
    _check_story_types(path, types, rows, story_types)
    empty_story, excluded = _empty_stories(path, table["story"], ids, types, rows)
    stories = _story_rows(table[~empty_story], ids[~empty_story], types[~empty_story])
    log.info(
        "%s: %d stories read (%s), %d excluded, %d without a summary (kept; the topic "
        "formulation skips them)",
        path,
        len(stories),
        ", ".join(f"{t} {n}" for t, n in stories["story_type"].value_counts().items()),
        len(excluded),
        int((~stories["has_topic"]).sum()),
    )
    return stories, excluded


def _check_ids(path: Path, ids: pd.Series, rows: pd.RangeIndex) -> None:
    """Every story has an AssignmentId, and no two share one."""
    empty_id = (ids == "").to_numpy()
    if empty_id.any():
        raise _rows_error(
            path, "empty AssignmentId (every story needs a unique id) in ", rows, empty_id
        )
    duplicated = ids.duplicated(keep=False).to_numpy()
    if duplicated.any():
        raise _rows_error(
            path,
            f"AssignmentId must be unique, but {ids[duplicated].nunique()} id(s) repeat, in ",
            rows,
            duplicated,
            labels=ids,
        )


def _check_story_types(
    path: Path, types: pd.Series, rows: pd.RangeIndex, story_types: Sequence[str]
) -> None:
    """Every memType is one of ``story_types``."""
    allowed = list(story_types)
    unknown = (~types.isin(allowed)).to_numpy()
    if unknown.any():
        raise _rows_error(
            path,
            f"memType {types[unknown].iloc[0]!r} is not an allowed story type "
            f"({', '.join(allowed)}); {int(unknown.sum())} row(s) have an unknown memType: ",
            rows,
            unknown,
            labels=types,
            then=". Fix the file or set hippocorpus.story_types in the config.",
        )


def _rows_error(
    path: Path,
    problem: str,
    rows: pd.RangeIndex,
    bad: np.ndarray,
    *,
    labels: pd.Series | None = None,
    then: str = "",
) -> InputDataError:
    """The error naming the rows (1-based lines) where ``bad`` holds, with their ``labels``:
    ``problem``, the rows (:func:`_row_list`), ``then``; at the first of them."""
    where = list(rows[bad])
    listed = _row_list(where, None if labels is None else list(labels[bad]))
    return InputDataError(path, f"{problem}{listed}{then}", row=where[0])


def _empty_stories(
    path: Path, story: pd.Series, ids: pd.Series, types: pd.Series, rows: pd.RangeIndex
) -> tuple[np.ndarray, pd.DataFrame]:
    """The stories with an empty text or no letter (a mask), and their exclusion rows (logged)."""
    text = story.str.strip()
    empty = (text == "").to_numpy()
    no_letters = ~empty & ~text.str.contains(LETTER, regex=True).to_numpy()
    empty_story = empty | no_letters
    excluded = pd.DataFrame(
        {
            "story_id": ids[empty_story].to_numpy(),
            "story_type": types[empty_story].to_numpy(),
            "row": rows[empty_story].to_numpy(dtype="int64"),
            "reason": np.where(empty[empty_story], "empty story", NO_LETTERS).astype(object),
        },
        columns=list(EXCLUDED_COLUMNS),
    )
    if len(excluded):
        log.warning(
            "%s: %d stor%s with an empty text or no letters excluded: %s",
            path,
            len(excluded),
            "y" if len(excluded) == 1 else "ies",
            _row_list(list(excluded["row"]), list(excluded["story_id"])),
        )
    return empty_story, excluded


def _story_rows(table: pd.DataFrame, ids: pd.Series, types: pd.Series) -> pd.DataFrame:
    """The kept stories (:data:`STORY_COLUMNS`): the summary, stripped, is the topic (None when
    empty)."""
    summary = table["summary"].str.strip()
    has_topic = (summary != "").to_numpy()
    topic = pd.Series(summary.to_numpy(dtype=object), dtype=object)
    topic[~has_topic] = None
    return pd.DataFrame(
        {
            "story_id": ids.to_numpy(),
            "story_type": types.to_numpy(),
            "text": table["story"].to_numpy(),
            "topic": topic,
            "has_topic": has_topic,
            "block": _blocks(table, ids, types).to_numpy(),
        },
        columns=[*STORY_COLUMNS, "block"],
    )


def _blocks(table: pd.DataFrame, ids: pd.Series, types: pd.Series) -> pd.Series:
    """Each story's block (:data:`PAIR_COLUMNS`): a recalled story's own id, an imagined or
    retold story's pair id; None where the file has no pair column or the cell is empty."""
    block = pd.Series(None, index=ids.index, dtype=object)
    block[types == PAIRED_TO] = ids[types == PAIRED_TO]
    for kind, column in PAIR_COLUMNS.items():
        if column in table.columns:
            pair = table[column].fillna("").astype(str).str.strip()
            chosen = (types == kind) & (pair != "")
            block[chosen] = pair[chosen]
    return block


def sample_stories(
    stories: pd.DataFrame,
    *,
    fraction: float | None = None,
    per_type: int | None = None,
    seed: int,
    paired: bool = False,
) -> pd.DataFrame:
    """Stratified random sample of ``stories`` by ``story_type``, or of pairs.

    Stories are first sorted by ``story_id`` and each type is sampled on its own with the same
    ``seed``, so the sample depends only on the set of stories and the seed (not on row order, and
    not on which other types are present).

    Args:
        stories: Table from :func:`read_hippocorpus` (needs ``story_id`` and ``story_type``).
        fraction: Share of each type to keep: ``round(fraction * n)`` stories of a type with
            ``n`` stories (Python's ``round``, halves to even), at least 1 when ``n > 0``.
        per_type: Number of stories to keep per type; a type with fewer keeps all of them (with
            a warning).
        seed: Seed of the random draw.
        paired: Draw recalled stories instead (``fraction`` or ``per_type`` of those paired
            with a story of every other type present), and take with each every story paired
            with it (its ``block``): the imagined story written from its summary and its
            retelling (:func:`paired_sample`).

    Give at most one of ``fraction`` and ``per_type``; with neither, every story is kept.

    Returns:
        The sampled rows (all columns), sorted by ``(story_type, story_id)``, index reset.

    Raises:
        StoryflowError: both ``fraction`` and ``per_type`` given (their ranges are the config
            schema's).
    """
    if fraction is not None and per_type is not None:
        raise StoryflowError(
            "hippocorpus.sample: give either fraction or per_type, not both "
            f"(got fraction={fraction}, per_type={per_type})"
        )

    ordered = stories.sort_values("story_id", kind="stable").reset_index(drop=True)
    if paired:
        return paired_sample(ordered, fraction=fraction, per_type=per_type, seed=seed)
    parts = []
    for story_type, group in ordered.groupby("story_type", sort=True):
        k = _sample_size(len(group), fraction, per_type, str(story_type))
        parts.append(group.sample(n=k, random_state=seed))
    if not parts:
        return ordered.iloc[0:0].reset_index(drop=True)
    sample = pd.concat(parts)
    return sample.sort_values(["story_type", "story_id"], kind="stable").reset_index(drop=True)


def _sample_size(n: int, fraction: float | None, per_type: int | None, what: str) -> int:
    """How many of ``n`` stories to draw: ``round(fraction * n)`` (at least 1), ``per_type``
    (all ``n``, with a warning, when fewer exist) or all of them."""
    if fraction is not None:
        return max(1, round(fraction * n))
    if per_type is None:
        return n
    if per_type > n:
        log.warning(
            "sample: per_type=%d but only %d %s stories exist; keeping all of them",
            per_type,
            n,
            what,
        )
    return min(per_type, n)


def paired_sample(
    stories: pd.DataFrame, *, fraction: float | None, per_type: int | None, seed: int
) -> pd.DataFrame:
    """The recalled stories drawn (``per_type`` of them, or ``fraction``; all with neither)
    among those paired with at least one story of every other type in ``stories``, each with
    every story of its block (:data:`PAIR_COLUMNS`), sorted by ``(story_type, story_id)``.

    Raises:
        StoryflowError: the stories have no ``block`` (the file has no pair columns) or no
            recalled story is paired with every other type.
    """
    if "block" not in stories or stories["block"].isna().all():
        raise StoryflowError(
            "hippocorpus.sample.paired: the corpus file has no pair columns "
            f"({', '.join(PAIR_COLUMNS.values())}), so no story is paired; set paired: false"
        )
    types = set(stories["story_type"]) - {PAIRED_TO}
    recalled = stories[stories["story_type"] == PAIRED_TO]
    eligible = set(recalled["story_id"])
    for kind in types:
        eligible &= set(stories.loc[stories["story_type"] == kind, "block"].dropna())
    pool = recalled[recalled["story_id"].isin(eligible)]
    if pool.empty:
        raise StoryflowError(
            f"hippocorpus.sample.paired: no {PAIRED_TO} story is paired with a story of every "
            f"other type ({', '.join(sorted(types))}); set paired: false"
        )
    k = _sample_size(len(pool), fraction, per_type, f"{PAIRED_TO} (paired with every other type)")
    drawn = set(pool.sample(n=k, random_state=seed)["story_id"])
    sample = stories[stories["block"].isin(drawn)]
    return sample.sort_values(["story_type", "story_id"], kind="stable").reset_index(drop=True)


def sample_counts(
    all_stories: pd.DataFrame,
    sampled: pd.DataFrame,
    excluded: pd.DataFrame,
    story_types: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Story counts per type at each step, plus a ``"total"`` row.

    Args:
        all_stories: Usable stories (``stories`` from :func:`read_hippocorpus`).
        sampled: Output of :func:`sample_stories`.
        excluded: ``excluded`` from :func:`read_hippocorpus`.
        story_types: Order of the rows (types never seen get zeros); default: sorted types seen.

    Returns:
        One row per story type, then ``"total"``, columns

        * ``story_type``;
        * ``n_in_corpus``: records of that type in the CSV (usable + excluded);
        * ``n_excluded``: of those, stories left out (e.g. empty text);
        * ``n_sampled``: stories in the sample (the context-only formulation scores these);
        * ``n_with_topic``: sampled stories with a summary (the topic formulation scores these);
        * ``n_without_topic``: sampled stories without a summary.
    """
    seen = set(all_stories["story_type"]) | set(excluded["story_type"]) | set(sampled["story_type"])
    if story_types is None:
        order = sorted(seen)
    else:
        order = list(story_types) + sorted(seen - set(story_types))

    def per_type(values: pd.Series) -> pd.Series:
        return values.value_counts().reindex(order, fill_value=0)

    n_usable = per_type(all_stories["story_type"])
    n_excluded = per_type(excluded["story_type"])
    counts = pd.DataFrame(
        {
            "n_in_corpus": n_usable + n_excluded,
            "n_excluded": n_excluded,
            "n_sampled": per_type(sampled["story_type"]),
            "n_with_topic": per_type(sampled.loc[sampled["has_topic"], "story_type"]),
            "n_without_topic": per_type(sampled.loc[~sampled["has_topic"], "story_type"]),
        }
    ).astype("int64")
    counts.loc["total"] = counts.sum()
    counts.index.name = "story_type"
    return counts.reset_index()[list(COUNT_COLUMNS)]


def download_hippocorpus(url: str, dest: Path, expected_name: str = "hippoCorpusV2.csv") -> None:
    """Download the official HIPPOCORPUS zip from ``url`` and extract ``expected_name`` to ``dest``.

    The CSV is looked for by file name anywhere inside the zip (the release keeps it in a
    folder). ``dest`` is written only once the whole file is extracted
    (:func:`storyflow.corpora.download.fetch`).

    Raises:
        StoryflowError: the download failed (offline, timeout, HTTP error, bad URL; the message
            says how to get the file by hand), the download is not a zip, or the zip lacks
            ``expected_name``.
    """
    dest = Path(dest)

    def extract(archive: Path, out: Path) -> None:
        try:
            with zipfile.ZipFile(archive) as zf:
                members = [
                    m
                    for m in zf.infolist()
                    if not m.is_dir() and PurePosixPath(m.filename).name == expected_name
                ]
                if not members:
                    names = ", ".join(zf.namelist()[:20]) or "nothing"
                    raise StoryflowError(
                        f"the download from {url} holds no {expected_name} (it holds {names}). "
                        f"Check hippocorpus.url in the config, or put {expected_name} at {dest} "
                        "by hand."
                    )
                member = min(members, key=lambda m: len(m.filename))
                with zf.open(member) as src, out.open("wb") as sink:
                    shutil.copyfileobj(src, sink)
        except zipfile.BadZipFile:
            raise StoryflowError(
                f"the download from {url} is not a zip file. Check hippocorpus.url in the config, "
                f"or download the Hippocorpus release by hand and put {expected_name} at {dest}."
            ) from None
        log.info("extracted %s", member.filename)

    fetch(
        url,
        dest,
        transform=extract,
        hint="Download the Hippocorpus release (hippocorpus-u20220112.zip, Microsoft Research) "
        f"from {url} by hand, unzip it, and either put hippoCorpusV2.csv at {dest.absolute()} "
        "or set `data.mirror` in the config to a folder holding hippocorpus/hippocorpus.csv.",
    )


def read_hippocorpus_stories(
    path: str | Path, story_types: Sequence[str], limit: int | None = None
) -> pd.DataFrame:
    """HIPPOCORPUS stories (validated by :func:`read_hippocorpus`).

    Returns story_id, group, text, ``group`` = the story type (memType).
    """
    stories, _ = read_hippocorpus(path, story_types)
    stories = stories.rename(columns={"story_type": "group"})[["story_id", "group", "text"]]
    return limit_groups(stories, limit)
