"""Scores per detector, the story measures, and the human-vs-LLM detection rates.

The scored set of a maker is its flawed versions (F) and their originals (O), 1:1; the controls
C and D enter only the surprisal contrasts. Stories read from the stories table alone (maker
``original``) carry the detectors' P(error) into the story measures and the HANNA comparison.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.measures.plot_holes.ceeval import UNREAD, score_detector
from storyflow.measures.plot_holes.detect import TOO_LONG
from storyflow.measures.plot_holes.verdict import SURPRISAL_MEASURE, label, verdict_of
from storyflow.measures.plot_holes.versions import version_row
from storyflow.tables.plot_holes import ALL_LLMS

log = logging.getLogger(__name__)


def detector_kind(detector: str) -> str:
    """``baseline``, ``surprisal``, ``nli`` or ``model`` from a detector's name."""
    return detector.split(":", 1)[0] if ":" in detector else "model"


def _verification(labels: pd.Series) -> str:
    """One label for a maker's stories: exact, published, verified or unverified."""
    found = set(labels)
    if len(found) == 1 and found <= {"exact", "published"}:
        return found.pop()
    return "verified" if found <= {"yes"} else "unverified"


#: Localization statuses scored under the unparseable policy: no lines could be read, a line
#: number outside the story (format closed), quotes matching no sentence (format paper).
UNPARSED = UNREAD


def apply_unparseable_policy(group: pd.DataFrame, policy: str) -> pd.DataFrame:
    """One detector's answers on one maker's set under ``plot_holes.detection.unparseable``:
    ``wrong`` keeps every story (an unparseable localization scores 0, :func:`ceeval_full`);
    ``exclude`` drops each story whose answer could not be parsed together with the other
    version of the same story (its original or flawed twin), so the set stays balanced 1:1
    (the policies are the config schema's)."""
    if policy == "wrong":
        return group
    dropped = set(group.loc[group["answer_status"].isin(UNPARSED), "story_id"])
    return group[~group["story_id"].isin(dropped)]


def leave_out_too_long(group: pd.DataFrame) -> pd.DataFrame:
    """One detector's answers without the stories of which a version was left out for length
    (``answer_status`` ``too_long``), its twin version too, so the set stays 1:1."""
    dropped = set(group.loc[group["answer_status"] == TOO_LONG, "story_id"])
    return group[~group["story_id"].isin(dropped)]


def _count_unparseable(fitting: pd.DataFrame, group: pd.DataFrame, what: str, policy: str) -> int:
    """The unparseable localization answers among the versions ``fitting`` the window (logged
    with the versions the ``policy`` dropped from them, leaving ``group``)."""
    n_unparseable = int(fitting["answer_status"].isin(UNPARSED).sum())
    if n_unparseable:
        log.info(
            "%s: %d unparseable localization answer(s), policy %r (%d versions excluded)",
            what,
            n_unparseable,
            policy,
            len(fitting) - len(group),
        )
    return n_unparseable


def _withhold_unlocalized(score: dict[str, Any], fitting: pd.DataFrame, detector: str) -> None:
    """Set a model detector's CEEval-Full and its interval to NaN in ``score`` when it was
    asked but gave no parseable localization answer (logged): it is reported as
    unparseable, not scored."""
    asked = fitting["answer_status"].isin(["ok", *UNPARSED])
    if asked.any() and not (fitting["answer_status"] == "ok").any():
        log.warning(
            "%s: no parseable localization answer (%d asked): CEEval-Full not reported",
            detector,
            int(asked.sum()),
        )
        score.update(
            ceeval_full=math.nan,
            ceeval_ci_low=math.nan,
            ceeval_ci_high=math.nan,
            ceeval_pos=math.nan,
        )


def scores_table(
    answers: pd.DataFrame,
    made: pd.DataFrame,
    corpus: str,
    *,
    confidence: float,
    resamples: int,
    seed: int,
    unparseable: str,
    verdicts: Mapping[str, tuple[bool, str]] | None = None,
) -> pd.DataFrame:
    """PLOT_HOLE_SCORES rows: one per maker × detector on the balanced O + F set.

    Story versions left out for length go first, with their twin (``n_left_out``: versions).
    Unparseable localization answers are counted (``n_unparseable``, before the policy) and
    scored under ``unparseable`` (:func:`apply_unparseable_policy`; ``n_excluded``: versions
    dropped by it). A model detector that said "yes" to flawed stories but never gave a
    parseable localization answer gets CEEval-Full NaN (logged): it is reported as
    unparseable, not scored. ``verdicts``: the validity check's verdict per detector
    (:func:`storyflow.measures.plot_holes.verdict.verdict_of`), written as ``valid`` and
    ``validity``.
    """
    scored = answers[(answers["maker"] != "original") & answers["version"].isin(["O", "F"])]
    verification = made.groupby("maker")["verification"].agg(_verification)
    rows = []
    for (maker, detector), shown in scored.groupby(["maker", "detector"], sort=True):
        fitting = leave_out_too_long(shown)
        group = apply_unparseable_policy(fitting, unparseable)
        n_unparseable = _count_unparseable(fitting, group, f"{detector} on {maker}", unparseable)
        s = score_detector(group, confidence=confidence, resamples=resamples, seed=seed)
        s["n_unparseable"] = n_unparseable
        if detector_kind(detector) == "model":
            _withhold_unlocalized(s, fitting, detector)
        valid, validity = label(detector, verdicts or {})
        rows.append(
            {
                "corpus": corpus,
                "maker": maker,
                "detector": detector,
                "kind": detector_kind(detector),
                **s,
                "unparseable_policy": unparseable,
                "n_excluded": len(fitting) - len(group),
                "n_left_out": len(shown) - len(fitting),
                "verification": verification.get(maker, "exact"),
                "valid": valid,
                "validity": validity,
            }
        )
    return tables.PLOT_HOLE_SCORES.frame(tables.PLOT_HOLE_SCORES.partial(rows))


def left_out_table(answers: pd.DataFrame, corpus: str) -> pd.DataFrame:
    """PLOT_HOLE_LEFT_OUT: every story version a detector did not ask for its length."""
    out = answers[answers["answer_status"] == TOO_LONG]
    return tables.PLOT_HOLE_LEFT_OUT.frame(
        [
            tables.PLOT_HOLE_LEFT_OUT.row(
                corpus=corpus,
                detector=row.detector,
                item_id=row.item_id,
                story_id=row.story_id,
                maker=row.maker,
                version=row.version,
                n_prompt_tokens=int(row.n_prompt_tokens),
                reason="prompt and answer longer than the window (plot_holes.detection.n_ctx or "
                "the model's trained context): not asked",
            )
            for row in out.itertuples(index=False)
        ]
    )


#: The plot-hole story measures (the comparison's columns) and their units.
P_ERROR = "plot_holes.p_error"
F_MINUS_D = SURPRISAL_MEASURE
STORY_UNITS = {P_ERROR: "share (0-1)", F_MINUS_D: "nats/token"}


def story_measures(
    stories: pd.DataFrame,
    answers: pd.DataFrame,
    contrasts: pd.DataFrame,
    detectors: Sequence[str],
    surprisal_models: Sequence[str],
) -> pd.DataFrame:
    """Rows of the cross-measure table for every story of ``stories``: per detector model
    ``plot_holes.p_error`` (its P(yes) on the unmodified story, share 0-1), and per model of the
    surprisal baseline ``plot_holes.surprisal_f_minus_d`` (the story's F - D contrast,
    :func:`storyflow.measures.plot_holes.surprisal.story_contrasts`, nats/token). Each model
    scores only its own measure: a run with the surprisal baseline and no detector model (the
    default config) has the baseline's column alone. NaN where a detector left the story out
    for its length (warned) or the controlled maker made no versions of it (logged)."""
    original = answers[answers["maker"] == "original"].set_index(["story_id", "detector"])
    f_minus_d = (
        contrasts.set_index(["story_id", "model"])["f_minus_d"]
        if len(contrasts)
        else pd.Series(dtype=float)
    )
    ids = stories["story_id"].astype(str).tolist()
    rows: list[dict[str, Any]] = []
    nan: dict[str, list[str]] = {P_ERROR: [], F_MINUS_D: []}
    for measure, models, values in (
        (P_ERROR, detectors, original["p_error"]),
        (F_MINUS_D, surprisal_models, f_minus_d),
    ):
        for story in ids:
            for model in models:
                value = float(values.get((story, model), math.nan))
                if math.isnan(value):
                    nan[measure].append(f"{story} ({model})")
                rows.append(
                    tables.STORY_MEASURES.row(
                        story_id=story, model=model, measure=measure, value=value,
                        unit=STORY_UNITS[measure],
                    )
                )  # fmt: skip
    if nan[P_ERROR]:
        log.warning(
            "%s is NaN for %d story × model pair(s): the story was left out for its length "
            "(left_out.csv; the detect_plot_holes log): %s",
            P_ERROR,
            len(nan[P_ERROR]),
            ", ".join(nan[P_ERROR]),
        )
    if nan[F_MINUS_D]:
        log.info(
            "%s is NaN for %d story × model pair(s): the controlled maker made no versions of "
            "the story (skipped stories are listed in skipped.csv)",
            F_MINUS_D,
            len(nan[F_MINUS_D]),
        )
    return tables.STORY_MEASURES.frame(rows)


def _verdicts_by_prompt(
    answers: pd.DataFrame, stories: pd.DataFrame, human: str
) -> dict[str, pd.DataFrame]:
    """detector → its verdicts on the unmodified stories (1.0 flawed, 0.0 not, NaN for a story
    left out for length), prompt × story type, for each detector (sorted by name) with a
    column of ``human`` stories."""
    original = answers[answers["maker"] == "original"]
    # a story the detector could not read (left out for length) has no verdict
    original = original.assign(
        says_error=original["says_error"].astype(float).where(original["p_error"].notna())
    )
    labelled = original.merge(stories[["story_id", "story_type", "prompt_id"]], on="story_id")
    found = {}
    for detector, g in labelled.groupby("detector", sort=True):
        wide = g.pivot_table(
            index="prompt_id", columns="story_type", values="says_error", aggfunc="first"
        )
        if human in wide:
            found[str(detector)] = wide
    return found


def _rate_pairs(wide: pd.DataFrame, human: str) -> list[tuple[str, pd.DataFrame, int, int]]:
    """One detector's verdicts (``wide``: 1.0 flawed / 0.0 not, prompt × story type) paired
    by prompt, per LLM and then :data:`ALL_LLMS` (none without an LLM): the group, the
    prompts' verdicts on the ``human`` story and the group's (for :data:`ALL_LLMS` the mean of
    the LLMs' stories), and the group's stories called flawed and counted."""
    llms = sorted(c for c in wide.columns if c != human)
    found = []
    for group in [*llms, ALL_LLMS] if llms else []:
        if group == ALL_LLMS:
            pooled = wide[llms].astype(float)
            pair = pd.DataFrame({human: wide[human], group: pooled.mean(axis=1)})
            pair = pair[pooled.notna().any(axis=1)].dropna().astype(float)
            stories_llm = pooled.loc[pair.index]
            hits, count = int(stories_llm.sum().sum()), int(stories_llm.notna().sum().sum())
        else:
            pair = wide[[human, group]].dropna().astype(float)
            hits, count = int(pair[group].sum()), len(pair)
        found.append((group, pair, hits, count))
    return found


def _rate_intervals(
    pair: pd.DataFrame,
    human: str,
    group: str,
    hits: int,
    count: int,
    confidence: float,
    resamples: int,
    seed: int,
    *,
    tested: bool,
) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float, float]]:
    """The Wilson intervals of the human share and of the group's (``hits`` of ``count``
    stories), and the mean difference group − human over prompts (share) with its percentile
    bootstrap interval (NaN when the group is too small to be ``tested``)."""
    from storyflow import bootstrap, validity

    diff = (pair[group] - pair[human]).to_numpy()
    human_ci = validity.wilson_interval(int(pair[human].sum()), len(pair), confidence)
    llm_ci = validity.wilson_interval(hits, count, confidence)
    mean, low, high = bootstrap.Resampling(confidence, resamples, seed).mean_ci(diff)
    if not tested:
        low = high = math.nan
    return human_ci, llm_ci, (mean, low, high)


def human_vs_llm(
    answers: pd.DataFrame,
    stories: pd.DataFrame,
    *,
    human: str,
    confidence: float,
    resamples: int,
    seed: int,
    min_group_size: int,
    verdicts: Mapping[str, tuple[bool, str]],
    best: str | None,
) -> pd.DataFrame:
    """PLOT_HOLE_RATES: detection rates on HANNA's stories, paired by prompt. Per detector and
    LLM, the share of the human stories and of that LLM's stories (same prompts) the detector
    calls flawed, each with its Wilson interval, and their difference (LLM − human, share)
    with a percentile bootstrap interval over prompts; with fewer than ``min_group_size``
    prompts the difference is not tested (no interval; ``small_group``), the shares keep their
    Wilson intervals (inside 0-1 at any n). A last row per detector, group :data:`ALL_LLMS`,
    pools the LLMs: per prompt the mean of its LLM stories' verdicts minus the human story's
    (the LLM share's Wilson interval counts every LLM story). ``verdicts``: the validity check's
    verdicts; ``best``: the detector marked best (:func:`best_detector`)."""
    rows = []
    for detector, wide in _verdicts_by_prompt(answers, stories, human).items():
        valid, verdict = label(detector, verdicts)
        for group, pair, hits, count in _rate_pairs(wide, human):
            n = len(pair)
            small = n < min_group_size
            human_ci, llm_ci, (mean, low, high) = _rate_intervals(
                pair, human, group, hits, count, confidence, resamples, seed, tested=not small
            )
            rows.append(
                tables.PLOT_HOLE_RATES.row(
                    detector=detector,
                    group=group,
                    n_prompts=n,
                    rate_human=float(pair[human].mean()) if n else math.nan,
                    rate_human_ci_low=human_ci[0],
                    rate_human_ci_high=human_ci[1],
                    rate_llm=float(pair[group].mean()) if n else math.nan,
                    rate_llm_ci_low=llm_ci[0],
                    rate_llm_ci_high=llm_ci[1],
                    difference=mean,
                    ci_low=low,
                    ci_high=high,
                    small_group=small,
                    valid=valid,
                    validity=verdict,
                    best=detector == best,
                )
            )
    if any(r["small_group"] for r in rows):
        log.warning(
            "HANNA human-vs-LLM rates on fewer than %d prompts (stats.min_group_size): "
            "differences reported without intervals (the shares keep their Wilson intervals)",
            min_group_size,
        )
    return tables.PLOT_HOLE_RATES.frame(rows)


def best_detector(check: pd.DataFrame) -> str | None:
    """The model detector that passed its validity check with the highest CEEval-Full gain
    over always-no (None when none passed)."""
    passed = {d for d, (ok, _) in verdict_of(check).items() if ok and ":" not in d}
    gain = check[(check["role"] == "detector") & (check["check"] == "ceeval_minus_always_no")]
    gain = gain[gain["model"].isin(passed)]
    if gain.empty:
        return None
    return str(gain.sort_values(["value", "model"], ascending=[False, True]).iloc[0]["model"])


def shown_versions(made: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The O and F versions of every made story (the scored set), as one PLOT_HOLE_STORIES
    frame."""
    parts = [m[m["version"].isin(["O", "F"])] for m in made]
    if not parts:
        return tables.PLOT_HOLE_STORIES.empty()
    return tables.PLOT_HOLE_STORIES.frame(pd.concat(parts, ignore_index=True))


def detection_items(
    made: Sequence[pd.DataFrame], stories: pd.DataFrame, sentences: pd.DataFrame
) -> pd.DataFrame:
    """What detectors are shown: the O and F versions of every made story, then every story of
    the stories table unmodified (maker ``original``: its P(error) is a story measure)."""
    by_story = {
        sid: g.sort_values("sentence_idx")["text"].tolist()
        for sid, g in sentences.groupby("story_id", sort=False)
    }
    rows: list[dict[str, Any]] = []
    for story in stories.itertuples(index=False):
        sents = by_story.get(str(story.story_id), [])
        rows.append(
            version_row(
                str(story.story_id),
                "original",
                "O",
                sents,
                error_lines=[],
                contr_lines=[],
                target_idx=-1,
                attribute_class="",
                proposition="",
                original=story.text,
                verification="none",
                provenance="{}",
            )
        )
    shown = [m[m["version"].isin(["O", "F"])] for m in made]
    originals = tables.PLOT_HOLE_STORIES.frame(rows)
    return pd.concat([*shown, originals], ignore_index=True)


def read_made(
    paths: Sequence[str], verdicts: str | None, *, min_annotators: int
) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """The made-story tables, with the annotators' verdicts applied to the model maker's (when a
    completed sheet is given: the majority of at least ``min_annotators``,
    :func:`.review.read_reviews`), and the stories the verdicts rejected."""
    from storyflow.measures.plot_holes.review import apply_reviews, read_reviews

    made = [tables.read(tables.PLOT_HOLE_STORIES, p) for p in paths]
    rejected = tables.PLOT_HOLE_SKIPPED.empty()
    if verdicts:
        for i, frame in enumerate(made):
            if (frame["maker"] == "model").any():
                reviews = read_reviews(verdicts, frame, min_annotators)
                made[i], rejected = apply_reviews(frame, reviews)
    return made, rejected


@dataclass(frozen=True)
class CorpusScores:
    """The outputs of :func:`score_corpus`."""

    scores: pd.DataFrame
    surprisal: pd.DataFrame
    answers: pd.DataFrame
    story_measures: pd.DataFrame
    left_out: pd.DataFrame


def _every_answer(
    made: pd.DataFrame,
    answer_paths: Sequence[str],
    nll: pd.DataFrame,
    surprisal_models: Sequence[str],
    seed: int,
    settings: Mapping[str, Any],
) -> pd.DataFrame:
    """PLOT_HOLE_ANSWERS of every detector on a corpus: the models' (read from
    ``answer_paths``), the baselines' on the O and F versions of ``made`` (``seed``), and
    each surprisal model's on the controlled maker's versions (from its sentence NLLs
    ``nll``; flagged beyond ``settings["surprisal_z"]`` SDs)."""
    from storyflow.measures.plot_holes import detect, surprisal

    shown = made[made["version"].isin(["O", "F"])]
    parts = [tables.read(tables.PLOT_HOLE_ANSWERS, p) for p in answer_paths]
    parts.append(detect.baseline_answers(shown, seed))
    controlled = shown[shown["maker"] == "controlled"]
    for model in surprisal_models:
        parts.append(
            surprisal.surprisal_answers(nll, controlled, model, float(settings["surprisal_z"]))
        )
    return tables.PLOT_HOLE_ANSWERS.frame(pd.concat(parts, ignore_index=True))


def score_corpus(
    *,
    made_paths: Sequence[str],
    answer_paths: Sequence[str],
    surprisal_paths: Sequence[str],
    validity_path: str | None,
    verdicts_path: str | None,
    min_annotators: int,
    stories: pd.DataFrame,
    corpus: str,
    settings: Mapping[str, Any],
    detectors: Sequence[str],
    surprisal_models: Sequence[str],
) -> CorpusScores:
    """Every detector's answers (models, surprisal detectors, baselines), the scores table
    (with each detector's validity verdict), the surprisal contrasts per model, the story
    measures and the versions left out for length of one corpus.

    ``settings``: ``seed``, ``confidence``, ``surprisal_z`` and ``unparseable`` (the policy);
    ``validity_path``: the plot-hole validity table (results/plot_holes/tables/validity.csv);
    ``verdicts_path``: a completed review sheet of the model maker's stories, or None;
    ``min_annotators``: the ratings a story needs before the majority decides
    (``plot_holes.model_maker.min_annotators``).
    """
    from storyflow.measures.plot_holes import surprisal

    seed, confidence = int(settings["seed"]), float(settings["confidence"])
    verdicts = verdict_of(tables.read(tables.VALIDITY, validity_path)) if validity_path else {}
    made_frames, _ = read_made(made_paths, verdicts_path, min_annotators=min_annotators)
    made = pd.concat(made_frames, ignore_index=True)
    nll = (
        pd.concat([tables.read(tables.PLOT_HOLE_SURPRISAL, p) for p in surprisal_paths])
        if surprisal_paths
        else tables.PLOT_HOLE_SURPRISAL.empty()
    )
    answers = _every_answer(made, answer_paths, nll, surprisal_models, seed, settings)
    per_story = surprisal.story_contrasts(nll, made[made["maker"] == "controlled"])
    summary = (
        surprisal.contrast_summary(per_story, confidence) if len(per_story) else pd.DataFrame()
    )
    measures = story_measures(stories, answers, per_story, detectors, surprisal_models)
    return CorpusScores(
        scores=scores_table(
            answers,
            made,
            corpus,
            confidence=confidence,
            resamples=int(settings["resamples"]),
            seed=seed,
            unparseable=str(settings["unparseable"]),
            verdicts=verdicts,
        ),
        surprisal=summary,
        answers=answers,
        story_measures=measures,
        left_out=left_out_table(answers, corpus),
    )


def score_benchmark(
    *,
    made_path: str,
    answer_paths: Sequence[str],
    validity_path: str | None,
    settings: Mapping[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The scores table (corpus ``flawedfictions``) and every detector's answers on a
    FlawedFictions file read by :func:`storyflow.measures.plot_holes.benchmark.read_benchmark`:
    the configured models' answers plus the always-no and random baselines. The file's own
    balance of flawed and unflawed stories is kept. ``settings``: ``seed``, ``confidence``
    and ``unparseable`` (the policy); ``validity_path``: the plot-hole validity table, whose
    verdicts label the detectors."""
    from storyflow.measures.plot_holes import detect

    seed = int(settings["seed"])
    made = tables.read(tables.PLOT_HOLE_STORIES, made_path)
    parts = [tables.read(tables.PLOT_HOLE_ANSWERS, p) for p in answer_paths]
    parts.append(detect.baseline_answers(made, seed))
    answers = tables.PLOT_HOLE_ANSWERS.frame(pd.concat(parts, ignore_index=True))
    scores = scores_table(
        answers,
        made,
        "flawedfictions",
        confidence=float(settings["confidence"]),
        resamples=int(settings["resamples"]),
        seed=seed,
        unparseable=str(settings["unparseable"]),
        verdicts=verdict_of(tables.read(tables.VALIDITY, validity_path)) if validity_path else {},
    )
    return scores, answers
