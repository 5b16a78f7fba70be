"""One story table per corpus: every measure's story-level score as a column.

Rows: one per story and model. A score that depends on a model (``model`` of its
:data:`~storyflow.tables.STORY_MEASURES` rows is a model name) fills that model's row; a score
that depends on none (``model`` = ``""``) is repeated on every model's row of its story. A corpus
whose scores depend on no model has one row per story with ``model`` = ``""``.

Columns: ``story_id``, ``model``, the story's labels (``story_type`` and the corpus's label
columns; its text and topic are left out), ``n_sentences`` (spaCy sentences) and ``n_words``
(:func:`storyflow.sentences.count_words`: whitespace-separated words, the count the measures'
word limits use), then one column per measure, named as
the measure named it, in the unit the measure gave (:func:`measure_units`).

Only the corpus's stories table decides which stories are rows: scores of other stories (the
narrative-sense stage scores all HIPPOCORPUS stories, the sample is 27) are left out and counted;
a story a measure did not score keeps NaN in that measure's column and is counted as well.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from storyflow import tables
from storyflow.comparison.verdicts import failed_on_row, failed_pairs
from storyflow.errors import StoryflowError
from storyflow.sentences import count_words

log = logging.getLogger(__name__)

TEXT_FIELDS = ("text", "topic", "has_topic")
"""Columns of the stories table left out of the story table (the texts themselves)."""


def measure_units(measures: pd.DataFrame, stories: pd.DataFrame) -> pd.DataFrame:
    """Per measure: its unit, the models it was computed with ('' = none), how many of the
    corpus's ``stories`` it scored and how many of its values there are NaN.

    Raises:
        StoryflowError: a measure is given two different units (two measures chose one name).
    """
    measures = measures[measures["story_id"].isin(stories["story_id"])]
    units = measures.groupby("measure", sort=True)["unit"].unique()
    clash = units[units.map(len) > 1]
    if not clash.empty:
        name = clash.index[0]
        raise StoryflowError(
            f"measure {name!r} comes with more than one unit ({list(clash.iloc[0])}): two "
            "measures write scores under the same name"
        )
    grouped = measures.groupby("measure", sort=True)
    return tables.MEASURE_UNITS.frame(
        pd.DataFrame(
            {
                "measure": units.index,
                "unit": [u[0] for u in units],
                "models": grouped["model"].agg(lambda m: " ".join(sorted(set(m)))).to_numpy(),
                "n_stories": grouped["story_id"].nunique().to_numpy(),
                "n_missing": grouped["value"].agg(lambda v: int(v.isna().sum())).to_numpy(),
            }
        )
    )


def _corpus_scores(measures: Sequence[pd.DataFrame], ids: set[str]) -> pd.DataFrame:
    """The measures' STORY_MEASURES tables as one, without the stories outside ``ids`` (the
    corpus's; logged per measure). Raises StoryflowError when there is no table or a table
    repeats a (story, model, measure)."""
    if not measures:
        raise StoryflowError("the story table needs at least one measure's story_measures table")
    scores = pd.concat(measures, ignore_index=True)
    repeated = scores.duplicated(["story_id", "model", "measure"])
    if repeated.any():
        row = scores[repeated].iloc[0]
        raise StoryflowError(
            f"measure {row['measure']!r} scores story {row['story_id']!r} (model "
            f"{row['model']!r}) more than once: two measures write scores under the same name"
        )
    outside = ~scores["story_id"].isin(ids)
    for measure, n in scores[outside].groupby("measure")["story_id"].nunique().items():
        log.info(
            "%s: %d scored stories are not in this corpus's stories table (left out)", measure, n
        )
    return scores[~outside]


def _warn_unscored(scores: pd.DataFrame, measures: Sequence[str], n_stories: int) -> None:
    """Warn of each measure that scored fewer than the corpus's ``n_stories`` stories."""
    for measure in measures:
        scored = scores.loc[scores["measure"] == measure, "story_id"].nunique()
        if scored < n_stories:
            log.warning(
                "%s: %d of the corpus's %d stories have no score (NaN in the story table)",
                measure,
                n_stories - scored,
                n_stories,
            )


def story_table(
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    measures: Sequence[pd.DataFrame],
    verdicts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The corpus's story table (see the module docstring) from its stories, their sentences and
    the measures' :data:`~storyflow.tables.STORY_MEASURES` tables; ``failed_measures`` from
    ``verdicts`` (:data:`~storyflow.tables.MEASURE_VERDICTS`; None: no measure failed).

    Raises:
        StoryflowError: no measure table was given, or a table repeats a (story, model, measure).
    """
    ids = set(stories["story_id"])
    scores = _corpus_scores(measures, ids)
    labels = stories.drop(columns=[c for c in TEXT_FIELDS if c in stories.columns])
    labels = labels.assign(
        n_sentences=labels["story_id"]
        .map(sentences.groupby("story_id").size())
        .fillna(0)
        .astype("int64"),
        n_words=stories["text"].map(count_words).astype("int64"),
    )
    failed = failed_pairs(verdicts) if verdicts is not None else {}
    models = sorted(set(scores["model"]) - {""}) or [""]
    rows = labels.merge(pd.DataFrame({"model": models}), how="cross")
    by_model = scores[scores["model"] != ""].pivot(
        index=["story_id", "model"], columns="measure", values="value"
    )
    free = scores[scores["model"] == ""].pivot(index="story_id", columns="measure", values="value")
    table = rows.merge(by_model.reset_index(), on=["story_id", "model"], how="left")
    table = table.merge(free.reset_index(), on="story_id", how="left")
    order = ["story_id", "model", *[c for c in rows.columns if c not in ("story_id", "model")]]
    measure_columns = sorted(set(scores["measure"]))
    table = table.assign(
        failed_measures=[failed_on_row(m, measure_columns, failed) for m in table["model"]]
    )
    table = table[[*order, "failed_measures", *measure_columns]]
    _warn_unscored(scores, measure_columns, len(ids))
    return tables.STORY_TABLE.check(table.reset_index(drop=True))


def measure_columns(table: pd.DataFrame) -> list[str]:
    """The measure columns of a story table (those after the labels, the length and
    ``failed_measures``)."""
    return list(table.columns[list(table.columns).index("failed_measures") + 1 :])
