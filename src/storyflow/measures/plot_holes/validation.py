"""Can a detector find the errors? The plot-hole validity check (docs/validity.md).

A detector's P(error) on the corpora's stories (the story measure ``plot_holes.p_error``, the
human-vs-LLM rates) says something about the stories only when the detector tells flawed
stories from their originals. That is checked in the run, before those results, on the
controlled maker's pairs (flawed F, original O: exact ground truth, :mod:`.controlled`):

* the **validation pool** (:func:`validation_pool`): HIPPOCORPUS stories outside the analysed
  sample, of at most ``max_words`` words, taken in a seeded order and edited by the controlled
  maker until ``pairs`` pairs are made (used only for this check);
* the controlled pairs of every plot-hole corpus (already shown to the detectors);

both restricted to the attribute classes ``classes`` (``plot_holes.validation.classes``: by
default every class but ``adjective``, whose antonym swaps are mostly a change of state or of
referent, "the customers were never happy ... seemed genuinely sad", not a contradiction).

Pooled over all of them (corpus ``all`` in the validity table), per model and role
(``detector``: a model asked for P(error); ``nli``: the NLI baseline's model; ``surprisal``:
the surprisal baseline's model), three checks (:func:`role_checks`):

* ``auroc``: ROC AUC of the version's score (P(error); for surprisal the largest sentence NLL's
  distance from the story's mean in SDs) on F against O, with a percentile bootstrap interval
  over pairs; passes when the interval's lower end is above ``validity.detector.min_auroc``
  (0.5: chance);
* ``ceeval_minus_always_no``: CEEval-Full of the detector minus that of always "no" on the same
  pairs (0.5 per pair), i.e. the mean over pairs of (score on O + score on F) / 2 − 0.5, with
  a bootstrap interval over pairs; passes when its lower end is above
  ``validity.detector.min_ceeval_gain`` (0: no better than always "no"). An unparseable
  localization counts as wrong here (the paper's rule), whatever ``detection.unparseable``;
* ``pairs``: the number of pairs the two rest on; passes at ``validity.detector.min_pairs``.

A pair of which a version was left out (too long for the window) or has no score is not used
(counted in the detail).
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from storyflow import bootstrap, tables, validity
from storyflow.measures.plot_holes.controlled import make_controlled
from storyflow.measures.plot_holes.verdict import MEASURE
from storyflow.progress import LoggedBar
from storyflow.settings import FromParams

log = logging.getLogger(__name__)

CORPUS = validity.EVERY_CORPUS
SOURCE = "validation"
ROLES = ("detector", "nli", "surprisal")

#: Stories scanned per spaCy batch while the pool is filled.
CHUNK = 40


def _pool_order(
    stories: pd.DataFrame, analysed: Iterable[str], *, max_words: int, seed: int
) -> pd.DataFrame:
    """The stories the pool may use, in the order they are scanned: those of at most
    ``max_words`` whitespace words outside the ``analysed`` ids, shuffled with ``seed``."""
    left_out = set(map(str, analysed))
    words = stories["text"].str.split().str.len()
    eligible = stories[(words <= max_words) & ~stories["story_id"].astype(str).isin(left_out)]
    order = np.random.default_rng(seed).permutation(len(eligible))
    return eligible.iloc[order].reset_index(drop=True)


def _summed_coverage(covers: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """PLOT_HOLE_COVERAGE of the pool: the chunks' coverage ``covers`` summed per attribute
    class, the share recomputed (NaN when no story was eligible); empty when none."""
    if not covers:
        return tables.PLOT_HOLE_COVERAGE.empty()
    summed = (
        pd.concat(covers)
        .groupby("attribute_class", sort=False)[["n_stories", "n_eligible", "n_with_candidate"]]
        .sum()
        .reset_index()
    )
    summed.insert(0, "corpus", SOURCE)
    summed["share"] = summed["n_with_candidate"] / summed["n_eligible"].where(
        summed["n_eligible"] > 0
    )
    return tables.PLOT_HOLE_COVERAGE.frame(summed)


@dataclass(frozen=True)
class _Pool:
    """What :func:`validation_pool` is asked for (its arguments of the same names): ``pairs``
    pairs, from stories of at most ``max_words`` words shuffled with ``seed``, made by the
    controlled maker with its ``min_sentences`` and attribute ``classes`` (None: all)."""

    pairs: int
    max_words: int
    seed: int
    min_sentences: int
    classes: Sequence[str] | None


def _fill_pool(
    eligible: pd.DataFrame, split: Any, tagger: Any, pool: _Pool
) -> tuple[list[pd.DataFrame], list[pd.DataFrame], list[pd.DataFrame], int]:
    """The controlled maker run over ``eligible`` in chunks of :data:`CHUNK` stories until
    ``pool.pairs`` pairs are made: per chunk, the rows of versions O and F of the pairs kept,
    the coverage and the skipped stories; and the number of pairs made (fewer than
    ``pool.pairs`` when the stories run out)."""
    from storyflow.sentences import split_sentences

    made: list[pd.DataFrame] = []
    covers: list[pd.DataFrame] = []
    skipped: list[pd.DataFrame] = []
    n_made = 0
    progress = LoggedBar(total=pool.pairs, desc="validation pool", unit="pair", file=sys.stderr)
    for start in range(0, len(eligible), CHUNK):
        chunk = eligible.iloc[start : start + CHUNK]
        sentences = split_sentences(chunk, split)
        m, s, c = make_controlled(
            sentences,
            chunk,
            tagger,
            seed=pool.seed,
            min_sentences=pool.min_sentences,
            max_words=pool.max_words,
            corpus=SOURCE,
            classes=pool.classes,
        )
        ids = list(dict.fromkeys(m["story_id"]))[: pool.pairs - n_made]
        made.append(m[m["story_id"].isin(ids) & m["version"].isin(["O", "F"])])
        covers.append(c)
        skipped.append(s)
        n_made += len(ids)
        progress.update(len(ids))
        if n_made >= pool.pairs:
            break
    progress.close()
    return made, covers, skipped, n_made


def _stacked(table: tables.Table, frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The ``frames`` (rows of ``table``) one under the other; ``table``'s empty frame when none."""
    if not frames:
        return table.empty()
    return table.frame(pd.concat(frames, ignore_index=True))


def validation_pool(
    stories: pd.DataFrame,
    analysed: Iterable[str],
    split: Any,
    tagger: Any,
    *,
    pairs: int,
    max_words: int,
    seed: int,
    min_sentences: int,
    classes: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The validation pool: (PLOT_HOLE_STORIES rows of versions O and F, PLOT_HOLE_COVERAGE
    of the stories scanned, PLOT_HOLE_SKIPPED of the stories scanned but not used).

    ``stories``: a corpus's STORIES table (the whole HIPPOCORPUS); ``analysed``: the ids of
    its analysed sample (left out); ``split``: the spaCy pipeline of the sentences rule;
    ``tagger``: a full pipeline (tags and entities) for the controlled maker. Stories of at
    most ``max_words`` whitespace words are shuffled with ``seed`` and scanned in that order
    until ``pairs`` are made; fewer when the corpus runs out (logged). ``classes``: the
    attribute classes an edit may use (None: all).
    """
    eligible = _pool_order(stories, analysed, max_words=max_words, seed=seed)
    pool = _Pool(pairs, max_words, seed, min_sentences, classes)
    made, covers, skipped, n_made = _fill_pool(eligible, split, tagger, pool)
    if n_made < pairs:
        log.warning(
            "validation pool: only %d of %d pairs from %d stories of at most %d words",
            n_made,
            pairs,
            len(eligible),
            max_words,
        )
    coverage = _summed_coverage(covers)
    log.info(
        "validation pool: %d pairs from %d stories scanned (%d eligible of at most %d words, "
        "outside the analysed sample)",
        n_made,
        int(coverage.loc[coverage["attribute_class"] == "any", "n_stories"].sum()),
        len(eligible),
        max_words,
    )
    return (
        _stacked(tables.PLOT_HOLE_STORIES, made),
        coverage,
        _stacked(tables.PLOT_HOLE_SKIPPED, skipped),
    )


# --- the checks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckSettings(bootstrap.Resampling, FromParams):
    """Thresholds and intervals (config ``validity.detector``, ``stats.resamples``,
    ``stats.seed`` and ``stats.confidence``: :class:`storyflow.bootstrap.Resampling`) and the
    attribute ``classes`` of the pairs checked (``plot_holes.validation.classes``; None: every
    class). Defaults and ranges are the config schema's."""

    WHERE = "validity, stats and plot_holes.validation"

    min_auroc: float
    min_ceeval_gain: float
    min_pairs: int
    classes: tuple[str, ...] | None


def pairs_of(versions: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One row per pair from one detector's rows of versions O and F (columns ``source``,
    ``story_id``, ``version``, ``score``, ``ceeval``): ``score_O``, ``score_F``,
    ``ceeval_O``, ``ceeval_F``; and the number of pairs dropped (a version missing, left out or
    without a score)."""
    wide = (
        versions.drop_duplicates(["source", "story_id", "version"])
        .set_index(["source", "story_id", "version"])[["score", "ceeval"]]
        .unstack("version")
    )
    wide.columns = [f"{value}_{version}" for value, version in wide.columns]
    for column in ("score_O", "score_F", "ceeval_O", "ceeval_F"):
        if column not in wide:
            wide[column] = math.nan
    complete = wide.dropna(subset=["score_O", "score_F", "ceeval_O", "ceeval_F"])
    return complete.reset_index(), len(wide) - len(complete)


def _auroc(pairs: Sequence[tuple[float, float]]) -> float:
    f = [p[1] for p in pairs]
    o = [p[0] for p in pairs]
    return validity.roc_auc([*f, *o], [1] * len(f) + [0] * len(o))


def role_checks(
    pairs: pd.DataFrame, role: str, model: str, settings: CheckSettings, detail: str
) -> list[dict[str, Any]]:
    """The three VALIDITY rows of one model in one role (module docstring) from
    :func:`pairs_of`'s pairs."""
    units = list(zip(pairs["score_O"], pairs["score_F"], strict=True))
    n = len(units)
    auroc = _auroc(units) if n else math.nan
    auroc_ci = settings.units_interval(units, _auroc)
    gain = ((pairs["ceeval_O"] + pairs["ceeval_F"]) / 2 - 0.5).to_numpy(float)
    mean, low, high = settings.mean_ci(gain)
    common: dict[str, Any] = {
        "measure": MEASURE,
        "corpus": CORPUS,
        "role": role,
        "model": model,
        "n": n,
    }
    return [
        validity.check(
            **common,
            name="auroc",
            value=auroc,
            ci=auroc_ci,
            threshold=settings.min_auroc,
            rule="ci_low > threshold",
            detail=f"AUROC of the score on F against O; {detail}",
        ),
        validity.check(
            **common,
            name="ceeval_minus_always_no",
            value=mean,
            ci=(low, high),
            threshold=settings.min_ceeval_gain,
            rule="ci_low > threshold",
            detail=f"CEEval-Full minus always-no's (0.5) on the same pairs, share 0-1; {detail}",
        ),
        validity.check(
            **common,
            name="pairs",
            value=float(n),
            ci=(math.nan, math.nan),
            threshold=float(settings.min_pairs),
            rule="value >= threshold",
            detail=f"pairs; {detail}",
        ),
    ]


def surprisal_scores(nll: pd.DataFrame, model: str) -> pd.Series:
    """Per item_id: the surprisal detector's statistic, (largest sentence NLL − mean) / SD of
    the version's sentence NLLs (population SD, as the detector); NaN when undefined."""
    mine = nll[nll["model"] == model]

    def z(x: pd.Series) -> float:
        v = x.to_numpy(float)
        if len(v) < 3 or np.isnan(v).any() or v.std() == 0:
            return math.nan
        return float((v.max() - v.mean()) / v.std())

    return mine.groupby("item_id")["nll"].agg(z)


@dataclass(frozen=True)
class Source:
    """One set of controlled pairs: ``name`` (``validation`` or a corpus), its made stories
    (PLOT_HOLE_STORIES) and the files of each (role, model): answers, NLI answers or
    surprisal NLLs."""

    name: str
    made: pd.DataFrame
    files: Mapping[tuple[str, str], str]


def sources(
    made_paths: Sequence[str],
    made_names: Sequence[str],
    files: Sequence[str],
    labels: Sequence[tuple[str, str, str]],
) -> list[Source]:
    """The :class:`Source` of each made-story file (``made_names[i]`` names
    ``made_paths[i]``), with the files labelled (source, role, model) in ``labels``."""
    out = []
    for path, name in zip(made_paths, made_names, strict=True):
        mine = {
            (role, model): f
            for f, (source, role, model) in zip(files, labels, strict=True)
            if source == name
        }
        out.append(Source(name, tables.read(tables.PLOT_HOLE_STORIES, path), mine))
    return out


def check_detectors(
    sources: Sequence[Source], settings: CheckSettings, *, surprisal_z: float
) -> pd.DataFrame:
    """The VALIDITY table of the plot-hole roles: for every (role, model) named in any
    source, the pooled checks (module docstring)."""
    from storyflow.measures.plot_holes.surprisal import surprisal_answers

    roles = sorted(
        {key for s in sources for key in s.files}, key=lambda k: (ROLES.index(k[0]), k[1])
    )
    rows: list[dict[str, Any]] = []
    for role, model in roles:
        parts, counts = [], {}
        for source in sources:
            path = source.files.get((role, model))
            shown = source.made[
                (source.made["maker"] == "controlled") & source.made["version"].isin(["O", "F"])
            ]
            if settings.classes is not None:
                shown = shown[shown["attribute_class"].isin(settings.classes)]
            if path is None or shown.empty:
                continue
            if role == "surprisal":
                nll = tables.read(tables.PLOT_HOLE_SURPRISAL, path)
                answers = surprisal_answers(nll, shown, model, surprisal_z)
                answers["p_error"] = answers["item_id"].map(surprisal_scores(nll, model))
            else:
                answers = tables.read(tables.PLOT_HOLE_ANSWERS, path)
                answers = answers[answers["item_id"].isin(shown["item_id"])]
            left_out = answers["answer_status"] == "too_long"
            parts.append(
                pd.DataFrame(
                    {
                        "source": source.name,
                        "story_id": answers["story_id"].astype(str),
                        "version": answers["version"],
                        "score": answers["p_error"].where(~left_out),
                        "ceeval": answers["ceeval"].astype(float).where(~left_out),
                    }
                )
            )
            counts[source.name] = answers["story_id"].nunique()
        if not parts:
            continue
        pairs, dropped = pairs_of(pd.concat(parts, ignore_index=True))
        detail = ", ".join(f"{k} {v}" for k, v in counts.items())
        detail = f"controlled pairs: {detail}" + (
            f"; {dropped} pair(s) without a score (left out for length) not used" if dropped else ""
        )
        rows.extend(role_checks(pairs, role, model, settings, detail))
        log.info("%s %s: %d pairs (%s)", role, model, len(pairs), detail)
    return validity.frame(rows)
