"""The story explorer's data: a corpus's story table and, per story, what the page shows of it.

:func:`gather` reads the run's tables (each as its :mod:`storyflow.tables` definition says) and
returns an :class:`Explorer`:

* ``index`` (small, parsed when the page opens): the stories (id, group, sentences, words), the
  story table's rows per story and model with one value per measure (4 significant digits;
  ``None`` for NaN), each measure's unit and whether it depends on a model, the measures with no
  value at all (left out), the (measure, model) pairs that rest on a model that failed its
  validity check, and the verdict of every tension curve, fabula-entropy reader and plot-hole
  detector the details name. The page shows one row per story, with the values of the model
  chosen above the table, and for the selected story every value with its percentile in its
  group;
* ``details`` (one entry per story, aligned with ``index["stories"]``; the page parses one only
  when its story is selected): the story's sentences (its text, once), and where the measure
  ran on the corpus, each model's sentence NLLs, its tension curves, its fabula-entropy passages
  with every reader's answers, and its plot-hole versions with every detector's answer.

Per-sentence and per-cut numbers are integers in thousandths (:data:`MILLI`): an NLL of 2.719
nats/token is stored as 2719, a no-rate of 0.25 as 250, a P(yes) of 0.879 as 879. Sequentiality
is not stored: the page computes it as NLL without context minus NLL with context (nats/token),
as :data:`storyflow.tables.SENTENCE_SEQUENTIALITY` defines it, so it is exact to 0.002.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.comparison.story_table import measure_columns
from storyflow.comparison.verdicts import verdict
from storyflow.plan.registry import verdict_rules
from storyflow.validity import FAILED

#: Stored per-sentence and per-cut numbers are integers in thousandths of their unit.
MILLI = 1000
#: Significant digits kept of a story measure's value in the table.
DIGITS = 4
#: The history (``tables.SENTENCE_SEQUENTIALITY``'s ``history``) whose story mean is the story
#: table's ``sequentiality.<formulation>`` (storyflow.measures.sequentiality.scores): the page
#: shows it first.
STORY_HISTORY = "full"


@dataclass(frozen=True)
class Sources:
    """The tables of one corpus the explorer reads. The first six exist for every compared
    corpus; a measure the corpus does not run leaves its tables ``None`` (the page shows what
    exists).

    Attributes:
        stories: :data:`storyflow.tables.STORIES` (the topic shown with the text).
        sentences: :data:`storyflow.tables.SENTENCES` (the story's text, once).
        table: :data:`storyflow.tables.STORY_TABLE` (one row per story and model).
        units: :data:`storyflow.tables.MEASURE_UNITS` (each measure's unit).
        verdicts: :data:`storyflow.tables.MEASURE_VERDICTS` (failed measure × model pairs).
        validity: :data:`storyflow.tables.VALIDITY` (the verdicts of curves, readers, detectors).
        sentence_scores: :data:`storyflow.tables.SENTENCE_SEQUENTIALITY`, every model's.
        tension_curves: :data:`storyflow.tables.TENSION_CURVES`, every forecaster and judge's.
        fabula_versions: :data:`storyflow.tables.FEI_VERSIONS` (the passages shown to readers).
        fabula_questions: :data:`storyflow.tables.FEI_QUESTIONS`.
        fabula_answers: :data:`storyflow.tables.FEI_ANSWERS`, every reader's.
        plot_hole_stories: :data:`storyflow.tables.PLOT_HOLE_STORIES`, every maker's.
        plot_hole_answers: :data:`storyflow.tables.PLOT_HOLE_ANSWERS` (scored, every detector).
    """

    stories: pd.DataFrame
    sentences: pd.DataFrame
    table: pd.DataFrame
    units: pd.DataFrame
    verdicts: pd.DataFrame
    validity: pd.DataFrame
    sentence_scores: pd.DataFrame | None = None
    tension_curves: pd.DataFrame | None = None
    fabula_versions: pd.DataFrame | None = None
    fabula_questions: pd.DataFrame | None = None
    fabula_answers: pd.DataFrame | None = None
    plot_hole_stories: pd.DataFrame | None = None
    plot_hole_answers: pd.DataFrame | None = None


#: The table each per-story input of :class:`Sources` is read as (the rule's input names:
#: :data:`storyflow.plan.comparison.EXPLORER_INPUTS`).
OPTIONAL_TABLES = {
    "sentence_scores": tables.SENTENCE_SEQUENTIALITY,
    "tension_curves": tables.TENSION_CURVES,
    "fabula_versions": tables.FEI_VERSIONS,
    "fabula_questions": tables.FEI_QUESTIONS,
    "fabula_answers": tables.FEI_ANSWERS,
    "plot_hole_stories": tables.PLOT_HOLE_STORIES,
    "plot_hole_answers": tables.PLOT_HOLE_ANSWERS,
}


def read_sources(paths: Mapping[str, Any]) -> Sources:
    """The :class:`Sources` from their files: ``paths`` maps ``stories``, ``sentences``,
    ``table``, ``units``, ``verdicts`` and ``validity`` to one file each, and each name of
    :data:`OPTIONAL_TABLES` to a list of files (empty or absent: that table is ``None``).
    Every file is read through :func:`storyflow.tables.read`, which names a missing column."""

    def files(name: str) -> list[str | Path]:
        value = paths.get(name, [])
        return [value] if isinstance(value, str | Path) else list(value)

    optional = {
        name: tables.read_all(table, files(name)) if files(name) else None
        for name, table in OPTIONAL_TABLES.items()
    }
    return Sources(
        stories=tables.read(tables.STORIES, paths["stories"]),
        sentences=tables.read(tables.SENTENCES, paths["sentences"]),
        table=tables.read(tables.STORY_TABLE, paths["table"]),
        units=tables.read(tables.MEASURE_UNITS, paths["units"]),
        verdicts=tables.read(tables.MEASURE_VERDICTS, paths["verdicts"]),
        validity=tables.read(tables.VALIDITY, paths["validity"]),
        **optional,
    )


@dataclass(frozen=True)
class Explorer:
    """The page's data: ``index`` (the table and the run-wide labels) and ``details`` (one
    JSON-ready mapping per story of ``index["stories"]["id"]``, in that order)."""

    index: dict[str, Any]
    details: list[dict[str, Any]]


def milli(value: float | None) -> int | None:
    """``value`` in thousandths of its unit, rounded to an integer (``None`` for NaN or None)."""
    return None if value is None or not math.isfinite(value) else round(value * MILLI)


def rounded(value: float | None) -> float | None:
    """``value`` to :data:`DIGITS` significant digits (``None`` for NaN or None)."""
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.{DIGITS}g}")


def _present(frame: pd.DataFrame | None) -> bool:
    return frame is not None and not frame.empty


def _verdict(validity: pd.DataFrame, corpus: str, measure: str, model: str) -> dict[str, str]:
    """The verdict of a model behind ``measure`` as the comparison states it (``valid``,
    ``failed`` with the failed checks, ``not checked``)."""
    word, failed = verdict(validity, corpus, measure, model, verdict_rules())
    return {"verdict": word, "failed": failed}


def _ints(values: Iterable[Any]) -> list[int]:
    return [int(v) for v in values]


def story_index(sources: Sources) -> tuple[list[str], dict[str, Any]]:
    """The stories in table order (the story table's order of first appearance) and their
    columns: id, group (``story_type``), sentences and words."""
    table = sources.table
    first = table.drop_duplicates("story_id")
    ids = [str(s) for s in first["story_id"]]
    return ids, {
        "id": ids,
        "group": [str(g) for g in first["story_type"]],
        "n_sentences": _ints(first["n_sentences"]),
        "n_words": _ints(first["n_words"]),
    }


def table_rows(sources: Sources, ids: list[str]) -> dict[str, Any]:
    """The story table as columns: per row its story (index into ``ids``), its model (index into
    ``models``), one list of values per measure (4 significant digits, None for NaN), and the
    (row, measure) cells that rest on a model that failed its validity check (the row's
    ``failed_measures``). A measure with no value in any row is left out of ``measures`` and
    named in ``empty_measures``; a measure that depends on no model (its values repeated on
    every model's row) is marked ``free``."""
    table = sources.table
    present = [m for m in measure_columns(table) if table[m].notna().any()]
    empty = [m for m in measure_columns(table) if m not in present]
    models = sorted({str(m) for m in table["model"]})
    position = {s: i for i, s in enumerate(ids)}
    model_of = {m: i for i, m in enumerate(models)}
    failed = []
    for row, names in enumerate(table["failed_measures"].fillna("")):
        failed += [[row, present.index(n)] for n in str(names).split() if n in present]
    units = dict(zip(sources.units["measure"], sources.units["unit"], strict=True))
    scored_by = dict(zip(sources.units["measure"], sources.units["models"].fillna(""), strict=True))
    return {
        "models": models,
        "measures": [
            {"name": m, "unit": str(units.get(m, "")), "free": not str(scored_by.get(m, ""))}
            for m in present
        ],
        "empty_measures": empty,
        "rows": {
            "story": [position[str(s)] for s in table["story_id"]],
            "model": [model_of[str(m)] for m in table["model"]],
            "values": [[rounded(float(v)) for v in table[m]] for m in present],
        },
        "failed": failed,
        "verdicts": [
            {"measure": str(m), "model": str(mod), "failed": str(f)}
            for m, mod, v, f in sources.verdicts[["measure", "model", "verdict", "failed"]]
            .fillna("")
            .itertuples(index=False)
            if v == FAILED
        ],
    }


def sentence_texts(sources: Sources, ids: list[str]) -> dict[str, list[str]]:
    """Each story's sentences in order (its whole text as one sentence when it has none)."""
    by_story = {
        str(story): [str(t) for t in group.sort_values("sentence_idx")["text"]]
        for story, group in sources.sentences.groupby("story_id", sort=False)
    }
    texts = dict(zip(sources.stories["story_id"].astype(str), sources.stories["text"], strict=True))
    return {s: by_story.get(s) or [str(texts.get(s, ""))] for s in ids}


def sequentiality_details(
    scores: pd.DataFrame, n_sentences: dict[str, int]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Per story and model, per formulation, the sentences' NLL without context (``base``: the
    h = 0 term) and with each history (``ctx``, by history label), in thousandths of a nat per
    token, one entry per sentence (None where the sentence has no score). Also the models,
    formulations and histories found (histories in their order: 1, 2, ..., full)."""
    models = sorted({str(m) for m in scores["model"]})
    formulations = sorted({str(f) for f in scores["formulation"]})
    labels = {str(h) for h in scores["history"]}
    histories = sorted(labels - {"full"}, key=int) + (["full"] if "full" in labels else [])
    keys = ["story_id", "model", "formulation"]
    # one row per story, model, formulation (and history), one column per sentence
    context = scores.set_index([*keys, "history", "sentence_idx"])["nll_context"].unstack()
    base = (
        scores.drop_duplicates([*keys, "sentence_idx"])
        .set_index([*keys, "sentence_idx"])["nll_base"]
        .unstack()
    )
    per_story: dict[str, dict[str, Any]] = {}
    for (story, model, formulation), row in zip(base.index, _milli_rows(base), strict=True):
        length = n_sentences.get(str(story), 0)
        entry = per_story.setdefault(str(story), {}).setdefault(str(model), {})
        entry[str(formulation)] = {"base": _sized(row, base.columns, length), "ctx": {}}
    for (story, model, formulation, history), row in zip(
        context.index, _milli_rows(context), strict=True
    ):
        length = n_sentences.get(str(story), 0)
        ctx = per_story[str(story)][str(model)][str(formulation)]["ctx"]
        ctx[str(history)] = _sized(row, context.columns, length)
    return {
        "models": models,
        "formulations": formulations,
        "histories": histories,
        "story_history": STORY_HISTORY,
    }, per_story


def _milli_rows(frame: pd.DataFrame) -> list[list[int | None]]:
    """Each row of a numeric frame in thousandths (integers; None for NaN)."""
    values = np.rint(frame.to_numpy(dtype=float) * MILLI)
    return [[None if math.isnan(v) else int(v) for v in row] for row in values.tolist()]


def _sized(row: list[int | None], columns: pd.Index, length: int) -> list[int | None]:
    """``row`` (one value per sentence index of ``columns``) as a list of ``length`` sentences
    (None where a sentence has no value; indices beyond the story dropped)."""
    out: list[int | None] = [None] * length
    for idx, value in zip(columns, row, strict=True):
        if 0 <= int(idx) < length:
            out[int(idx)] = value
    return out


def tension_details(
    curves: pd.DataFrame, validity: pd.DataFrame, corpus: str
) -> tuple[list[dict[str, str]], dict[str, list[dict[str, Any]]]]:
    """The (forecaster, judge) curves with their verdicts, and per story its curves: per cut the
    sentence it follows (0-based), the share of the story's tokens before it (``pct``) and the
    no-rate (share of the K endings that missed the truth), both in thousandths."""
    pairs = sorted(
        {(str(m), str(j)) for m, j in zip(curves["model"], curves["judge"], strict=True)}
    )
    labels = [
        {"model": m, "judge": j, **_verdict(validity, corpus, f"tension.no_rate.{j}", m)}
        for m, j in pairs
    ]
    position = {pair: i for i, pair in enumerate(pairs)}
    per_story: dict[str, list[dict[str, Any]]] = {}
    for (story, model, judge), group in curves.groupby(["story_id", "model", "judge"], sort=False):
        group = group.sort_values("cut")
        per_story.setdefault(str(story), []).append(
            {
                "curve": position[(str(model), str(judge))],
                "cuts": [
                    [int(s), milli(float(p)), milli(float(r))]
                    for s, p, r in group[["sentence_idx", "pct", "no_rate"]].itertuples(index=False)
                ],
            }
        )
    return labels, per_story


def _p_yes_by_question(
    answers: pd.DataFrame, readers: Sequence[str]
) -> dict[tuple[str, str, str], list[int | None]]:
    """(story, version, question) → each reader's P(yes) in thousandths, in the order of
    ``readers`` (None: that reader did not answer it)."""
    reader_of = {r: i for i, r in enumerate(readers)}
    p_yes: dict[tuple[str, str, str], list[int | None]] = {}
    if not answers.empty:
        for story, version, question, reader, p in answers[
            ["story_id", "version", "question_id", "reader", "p_yes"]
        ].itertuples(index=False):
            key = (str(story), str(version), str(question))
            p_yes.setdefault(key, [None] * len(readers))[reader_of[str(reader)]] = milli(float(p))
    return p_yes


def _story_versions(group: pd.DataFrame) -> dict[str, Any]:
    """One story's passage versions (its FEI_VERSIONS rows): each distinct line once
    (``lines``), each version with the indices of its lines, and an empty ``questions``."""
    lines: list[str] = []
    line_of: dict[str, int] = {}
    shown = []
    for row in group.itertuples(index=False):
        indices = []
        for line in str(row.text).split("\n"):
            if line not in line_of:
                line_of[line] = len(lines)
                lines.append(line)
            indices.append(line_of[line])
        shown.append(
            {
                "version": str(row.version),
                "passage": str(row.passage),
                "condition": str(row.condition),
                "k": int(row.k),
                "lines": indices,
            }
        )
    return {"lines": lines, "versions": shown, "questions": []}


def fabula_details(
    versions: pd.DataFrame,
    questions: pd.DataFrame,
    answers: pd.DataFrame | None,
    validity: pd.DataFrame,
    corpus: str,
) -> tuple[list[dict[str, str]], dict[str, dict[str, Any]]]:
    """The readers (``model/variant``) with their verdicts, and per story: its passage versions'
    lines (each distinct line once, ``lines``; a version lists indices into it) and its
    questions, each with every reader's P(yes) in thousandths (None: that reader did not
    answer it)."""
    answers = answers if answers is not None else pd.DataFrame(columns=["reader"])
    readers = sorted({str(r) for r in answers["reader"]})
    labels = [
        {"reader": r, **_verdict(validity, corpus, "fabula_entropy.answers", r)} for r in readers
    ]
    p_yes = _p_yes_by_question(answers, readers)
    per_story = {
        str(story): _story_versions(group)
        for story, group in versions.groupby("story_id", sort=False)
    }
    for row in questions.itertuples(index=False):
        story = per_story.get(str(row.story_id))
        if story is None:
            continue
        key = (str(row.story_id), str(row.version), str(row.question_id))
        story["questions"].append(
            {
                "version": str(row.version),
                "passage": str(row.passage),
                "kind": str(row.kind),
                "id": str(row.question_id),
                "line": int(row.line),
                "text": str(row.text),
                "truth": None if pd.isna(row.truth) else int(row.truth),
                "p_yes": p_yes.get(key, [None] * len(readers)),
            }
        )
    return labels, per_story


def _text(value: Any) -> str:
    """A text cell as a string ('' for a missing one)."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _lines_list(values: Any) -> list[int]:
    """A list-valued cell (numpy array, list or None) as a list of ints."""
    if values is None or (isinstance(values, float) and math.isnan(values)):
        return []
    return [int(v) for v in values]


def plot_hole_details(
    made: pd.DataFrame,
    answers: pd.DataFrame | None,
    sentences: dict[str, list[str]],
    validity: pd.DataFrame,
    corpus: str,
) -> tuple[list[dict[str, str]], dict[str, list[dict[str, Any]]]]:
    """The detectors with their verdicts, and per story its versions shown to the detectors:
    each version's sentences (an int: the story's own sentence of that index; a string: a
    sentence the maker wrote or changed), the 0-based ``changed`` sentences (not in the
    original version O, or not in the story when there is no O), the 1-based ``error_lines``
    and ``contr_lines`` the maker reports, and every detector's answer: P(error) in thousandths
    (None for a rule baseline or a version left out), its yes/no, the answer's status, its
    1-based predicted lines and the story's CEEval-Full score (0/1)."""
    answers = answers if answers is not None else pd.DataFrame(columns=["detector", "item_id"])
    detectors = sorted({str(d) for d in answers["detector"]})
    labels = [
        {"detector": d, **_verdict(validity, corpus, "plot_holes.answers", d)} for d in detectors
    ]
    detector_of = {d: i for i, d in enumerate(detectors)}
    by_item: dict[str, list[dict[str, Any]]] = {}
    for row in answers.itertuples(index=False):
        by_item.setdefault(str(row.item_id), []).append(
            {
                "detector": detector_of[str(row.detector)],
                "p_error": milli(float(row.p_error)),
                "says_error": bool(row.says_error),
                "status": str(row.answer_status),
                "pred_error": _lines_list(row.pred_error),
                "pred_contr": _lines_list(row.pred_contr),
                "ceeval": int(row.ceeval),
            }
        )
    per_story: dict[str, list[dict[str, Any]]] = {}
    for (story, maker), group in made.groupby(["story_id", "maker"], sort=False):
        own = sentences.get(str(story), [])
        own_index = {text: i for i, text in enumerate(own)}
        original = group[group["version"] == "O"]
        reference = set(original.iloc[0]["sentences"]) if not original.empty else set(own)
        for row in group.sort_values("version", key=lambda v: v.map(_VERSION_ORDER)).itertuples(
            index=False
        ):
            texts = [str(t) for t in row.sentences]
            per_story.setdefault(str(story), []).append(
                {
                    "maker": str(maker),
                    "version": str(row.version),
                    "has_error": bool(row.has_error),
                    "sentences": [own_index.get(t, t) for t in texts],
                    "changed": [i for i, t in enumerate(texts) if t not in reference],
                    "error_lines": _lines_list(row.error_lines),
                    "contr_lines": _lines_list(row.contr_lines),
                    "attribute_class": _text(row.attribute_class),
                    "proposition": _text(row.proposition),
                    "answers": by_item.get(str(row.item_id), []),
                }
            )
    return labels, per_story


#: The order the page lists a story's plot-hole versions: original, flawed, consistent change,
#: flawed without the establishing sentence.
_VERSION_ORDER = {"O": 0, "F": 1, "C": 2, "D": 3}


def gather(corpus: str, sources: Sources) -> Explorer:
    """The explorer's data of ``corpus`` from its tables (see the module docstring)."""
    ids, stories = story_index(sources)
    texts = sentence_texts(sources, ids)
    topics = dict(
        zip(sources.stories["story_id"].astype(str), sources.stories["topic"], strict=True)
    )
    index: dict[str, Any] = {
        "corpus": corpus,
        "milli": MILLI,
        "stories": stories,
        **table_rows(sources, ids),
        "sequentiality": None,
        "tension": [],
        "readers": [],
        "detectors": [],
    }
    details: dict[str, dict[str, Any]] = {}
    for s in ids:
        topic = topics.get(s)
        details[s] = {"sentences": texts[s], "topic": _text(topic) or None}
    if _present(sources.sentence_scores):
        lengths = {s: len(t) for s, t in texts.items()}
        index["sequentiality"], seq = sequentiality_details(sources.sentence_scores, lengths)
        for s, entry in seq.items():
            if s in details:
                details[s]["sequentiality"] = entry
    if _present(sources.tension_curves):
        index["tension"], curves = tension_details(sources.tension_curves, sources.validity, corpus)
        for s, points in curves.items():
            if s in details:
                details[s]["tension"] = points
    if _present(sources.fabula_versions) and sources.fabula_questions is not None:
        index["readers"], fabula = fabula_details(
            sources.fabula_versions,
            sources.fabula_questions,
            sources.fabula_answers,
            sources.validity,
            corpus,
        )
        for s, entry in fabula.items():
            if s in details:
                details[s]["fabula_entropy"] = entry
    if _present(sources.plot_hole_stories):
        index["detectors"], holes = plot_hole_details(
            sources.plot_hole_stories, sources.plot_hole_answers, texts, sources.validity, corpus
        )
        for s, versions in holes.items():
            if s in details:
                details[s]["plot_holes"] = versions
    return Explorer(index=index, details=[details[s] for s in ids])
