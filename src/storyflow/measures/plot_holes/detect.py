"""Detectors asked with a configured model, and the rule baselines.

Two answer formats (``plot_holes.detection.format``; prompts in the config,
``plot_holes.prompts``):

``closed`` (the default), on the story shown with numbered sentences (``1. ...``, one per
line), two tasks:

* **classification**: a closed choice between "Yes" and "No" (docs/lm.md: the probability of
  each whole answer string, summed over case variants). p_error = P(yes) renormalised over the
  two; the detector says "error" when p_error > ``threshold``;
* **localization**, asked only after a "yes": greedy generation (stopped at the end of the
  line, at most ``max_tokens`` tokens) read strictly as ``error: 4; contradicts: 1``
  (:func:`storyflow.measures.plot_holes.ceeval.parse_localization`). An answer that cannot be
  parsed is counted (``answer_status``) and scores 0.

``paper`` (the paper's procedure, `flawed_fictions.txt` l. 1560-1614), one free-form answer per
story version: the story is shown as plain text (its sentences joined by spaces, not numbered),
the model answers at ``temperature`` (seeded per story text) in up to ``reasoning_tokens``
tokens, in the paper's tags: an explanation, the quoted lines that carry the error
(``<error_lines>``) and those it contradicts (``<contradicted_lines>``), and a
``<decision>`` (:func:`.ceeval.paper_answer`). The quotes are matched to the story's sentences
(:mod:`.quotes`) and CEEval-Full asks, as in the paper, that each predicted set holds a
sentence of the ground truth. p_error is 1 for a yes and 0 for a no; an answer with no verdict
gets p_error 0.5 (no side taken: ties in the AUROC), says no, scores 0 and is counted
(``answer_status`` ``unparseable``).

Baselines: ``always-no`` (never an error) and ``random`` (yes with probability ½, one random
line each for S_error and S_contr; seeded per story version).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.lm.connect import LanguageModel
from storyflow.lm.prompts import Prompt
from storyflow.lm.sampling import SamplingSettings
from storyflow.measures.plot_holes.ceeval import (
    ANSWER_FORMAT,
    Localization,
    ceeval_full,
    paper_answer,
    parse_localization,
)
from storyflow.measures.plot_holes.versions import each_version
from storyflow.seeds import item_rng, stable_hash
from storyflow.settings import settings_from

log = logging.getLogger(__name__)

YES_NO_CHAT = {"yes": ["Yes", "yes"], "no": ["No", "no"]}
YES_NO_PLAIN = {"yes": [" Yes", " yes"], "no": [" No", " no"]}
CUE = "Answer:"


def numbered(sentences: Sequence[str]) -> str:
    """The story as numbered lines, ``1. first sentence`` ..."""
    return "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, start=1))


@dataclass(frozen=True)
class DetectorSettings:
    """``classify``, ``localize`` and ``detect`` (format paper): prompt templates with
    ``{story}`` (and ``{format}``); ``format``: a key of :data:`FORMAT_KEYS`; ``threshold``:
    p_error above which the detector says "error"; ``max_tokens``: tokens of a localization
    answer; ``reasoning_tokens``, ``temperature`` and ``seed``: length, sampling temperature (0 =
    greedy) and seed of a free-form answer (format paper); ``n_ctx``: the window in tokens
    (None: sized to the longest story, up to the model's trained context; an integer: fixed). A
    story version whose prompt and answer do not fit is not asked: it is left out
    (``answer_status`` ``too_long``). The keys the other format reads are None. Defaults and
    ranges are the config schema's (``plot_holes.detection``, ``plot_holes.prompts``)."""

    format: str
    classify: str | None
    localize: str | None
    detect: str | None
    threshold: float
    max_tokens: int | None
    reasoning_tokens: int | None
    temperature: float | None
    seed: int | None
    n_ctx: int | None

    @classmethod
    def from_config(cls, block: Mapping[str, Any]) -> DetectorSettings:
        """From the params of detect_plot_holes (the plan's detector settings): ``detection``
        and ``prompts`` with the keys of the configured answer format only (the other format's
        keys, absent there so that they re-run nothing, are None)."""
        detection, prompts = block["detection"], block["prompts"]
        unused = {
            key: None
            for name, keys in FORMAT_KEYS.items()
            if name != detection["format"]
            for key in keys
        }
        return settings_from(
            cls,
            {**detection, **prompts},
            where="plot_holes.detection and plot_holes.prompts",
            **unused,
        )


#: The detectors' answer formats (module docstring) and the prompts and detection keys each
#: reads; the config schema lists the formats (``plot_holes.detection.format``).
FORMAT_KEYS: dict[str, tuple[str, ...]] = {
    "closed": ("classify", "localize", "max_tokens"),
    "paper": ("detect", "reasoning_tokens", "temperature", "seed"),
}


#: answer_status of a story version not asked because it does not fit the window.
TOO_LONG = "too_long"


def answer_row(item: Any, detector: str, **answer: Any) -> dict[str, Any]:
    """A PLOT_HOLE_ANSWERS row: ``detector``'s answer on the story version ``item`` (a
    PLOT_HOLE_STORIES row read by attribute, e.g. from ``itertuples``); ``answer`` names the
    other columns (p_error, says_error, answer, answer_status, pred_error, pred_contr, ceeval,
    n_prompt_tokens)."""
    return tables.PLOT_HOLE_ANSWERS.row(
        item_id=item.item_id,
        story_id=item.story_id,
        maker=item.maker,
        version=item.version,
        detector=detector,
        has_error=bool(item.has_error),
        **answer,
    )


def fit_window(model: LanguageModel, needs: Sequence[int], n_ctx: int | None) -> int | None:
    """The most tokens a prompt and its answer may take, and a local model's window.

    The limit is ``n_ctx`` when given, else the model's trained context (None when unknown: a
    served model without a tokenizer file; nothing is then left out, the server decides). A
    local model's window (set before its weights load) is the largest of ``needs`` within the
    limit, rounded up to 64 tokens, so no memory is spent beyond the longest story asked."""
    trained = model.training_window()
    limit = n_ctx if n_ctx is not None else trained
    if model.window is not None:
        if limit is None:
            limit = model.window
        fitting = [n for n in needs if n <= limit]
        model.n_ctx = min(limit, max(64, -(-max(fitting, default=64) // 64) * 64))
    return limit


def question_prompt(model: LanguageModel, question: str) -> Prompt:
    """``question`` as the user's turn, rendered for ``model``: its chat template, the plain
    frame ending in :data:`CUE` for a base model, or messages for a chat API."""
    return model.render([{"role": "user", "content": question}], cue=CUE)


def _prompt(model: LanguageModel, template: str, sentences: Sequence[str]) -> Prompt:
    return question_prompt(model, template.format(story=numbered(sentences), format=ANSWER_FORMAT))


def plain(sentences: Sequence[str]) -> str:
    """The story as plain text, its sentences joined by spaces (format paper: not numbered)."""
    return " ".join(sentences)


def _paper_prompt(model: LanguageModel, template: str, sentences: Sequence[str]) -> Prompt:
    return question_prompt(model, template.format(story=plain(sentences)))


def yes_no(model: LanguageModel) -> dict[str, list[str]]:
    """The yes/no answer variants: bare after a chat template, after a space in a plain frame."""
    return YES_NO_PLAIN if model.mode == "plain" else YES_NO_CHAT


@dataclass(frozen=True)
class Planned:
    """What asking one story text takes: the first ``prompt`` (the classification, or the free
    answer's), the localization prompt ``ask`` (closed format), the prompt's ``tokens`` and the
    window the version ``need``s (prompt and answer)."""

    prompt: Prompt
    ask: Prompt
    tokens: int
    need: int


@dataclass(frozen=True)
class Verdict:
    """A detector's answer on one story version: ``p_error``, whether it ``says`` "error", the
    text ``answer`` it gave (if any), the ``status`` of its localization, the lines it names
    (``error``, ``contradicts``; None when it names none) and whether an answer without any
    verdict must score 0 (``no_verdict``)."""

    p_error: float
    says: bool
    answer: str = ""
    status: str = "not_asked"
    error: list[int] | None = None
    contradicts: list[int] | None = None
    no_verdict: bool = False


class ClosedFormat:
    """Answer format ``closed`` (module docstring): P(yes) of a closed choice on the numbered
    story, asked once per story text; after a "yes" on a version with ground truth, a greedy
    localization read strictly (:func:`.ceeval.parse_localization`)."""

    def __init__(self, model: LanguageModel, settings: DetectorSettings) -> None:
        # this format's keys (FORMAT_KEYS) are set; only the other format's are None
        assert settings.max_tokens is not None
        self.model, self.settings = model, settings
        self.options = yes_no(model)
        self.greedy = SamplingSettings(temperature=0, max_tokens=settings.max_tokens, stop=("\n",))
        self.p_error: dict[tuple[str, ...], float] = {}

    def plan(self, sents: tuple[str, ...]) -> Planned:
        s = self.settings
        assert s.classify is not None and s.localize is not None and s.max_tokens is not None
        prompt = _prompt(self.model, s.classify, sents)
        ask = _prompt(self.model, s.localize, sents)
        size = self.model.count(prompt)
        return Planned(prompt, ask, size, max(size, self.model.count(ask) + s.max_tokens) + 8)

    def verdict(self, item: Any, sents: tuple[str, ...], planned: Planned) -> Verdict:
        if sents not in self.p_error:
            self.p_error[sents] = self.model.answer(planned.prompt, self.options).probs[0]
        p_error = self.p_error[sents]
        says = bool(p_error > self.settings.threshold)
        if not (says and item.maker != "original"):
            return Verdict(p_error, says)
        answer = self.model.sample(planned.ask, 1, self.greedy)[0].text
        parsed = parse_localization(answer, len(sents))
        lines = (parsed.error, parsed.contradicts) if parsed.ok else (None, None)
        return Verdict(p_error, says, answer, parsed.status, *lines)

    @property
    def asked(self) -> int:
        """Story texts asked."""
        return len(self.p_error)


class PaperFormat:
    """Answer format ``paper`` (module docstring): one free-form answer per story text (plain
    text, at ``temperature``, seeded by the text), its verdict and quoted lines parsed once
    (:func:`.ceeval.paper_answer`); p_error 1 for a yes, 0 for a no, 0.5 without a verdict."""

    def __init__(self, model: LanguageModel, settings: DetectorSettings) -> None:
        self.model, self.settings = model, settings
        self.answers: dict[tuple[str, ...], tuple[str, str | None, Localization]] = {}

    def plan(self, sents: tuple[str, ...]) -> Planned:
        s = self.settings
        assert s.detect is not None and s.reasoning_tokens is not None  # this format's keys
        prompt = _paper_prompt(self.model, s.detect, sents)
        size = self.model.count(prompt)
        return Planned(prompt, prompt, size, size + s.reasoning_tokens + 8)

    def verdict(self, item: Any, sents: tuple[str, ...], planned: Planned) -> Verdict:
        s = self.settings
        if sents not in self.answers:
            # this format's keys (FORMAT_KEYS) are set
            assert s.temperature is not None and s.reasoning_tokens is not None
            assert s.seed is not None
            reasoning = SamplingSettings(
                temperature=s.temperature,
                max_tokens=s.reasoning_tokens,
                seed=(int(s.seed) + stable_hash(plain(sents))) % 2**32,
            )
            text = self.model.sample(planned.prompt, 1, reasoning)[0].text
            self.answers[sents] = (text, *paper_answer(text, sents))
        answer, decision, parsed = self.answers[sents]
        p_error = {"yes": 1.0, "no": 0.0}.get(decision or "", 0.5)
        if decision is None:
            # no verdict: wrong whatever the truth (the paper does not say how such an answer
            # is scored; read as "no" it would score 1 on every original)
            return Verdict(p_error, False, answer, "unparseable", no_verdict=True)
        says = bool(p_error > s.threshold)
        if not (says and item.maker != "original"):
            return Verdict(p_error, says, answer)
        lines = (parsed.error, parsed.contradicts) if parsed.ok else (None, None)
        return Verdict(p_error, says, answer, parsed.status, *lines)

    @property
    def asked(self) -> int:
        """Story texts asked."""
        return len(self.answers)


#: The answer formats (``plot_holes.detection.format``), each its own way of asking and reading.
FORMATS: dict[str, type[ClosedFormat] | type[PaperFormat]] = {
    "closed": ClosedFormat,
    "paper": PaperFormat,
}


def detect(model: LanguageModel, items: pd.DataFrame, settings: DetectorSettings) -> pd.DataFrame:
    """PLOT_HOLE_ANSWERS rows of ``model`` for every story version of ``items``
    (PLOT_HOLE_STORIES rows), asked in the configured answer format (:data:`FORMATS`). Equal
    texts are asked once; a localization only after a "yes" on a version with ground truth
    (maker not ``original``). The window is sized first (:func:`fit_window`): each version
    needs its longest prompt with its answer; a version that does not fit is left out
    (p_error NaN, ``answer_status`` ``too_long``, logged with its tokens)."""
    asker = FORMATS[settings.format](model, settings)
    planned = _plan_texts(asker, items)
    limit = fit_window(model, [p.need for p in planned.values()], settings.n_ctx)
    rows: list[dict[str, Any]] = []
    too_long: list[str] = []
    started = time.perf_counter()
    for item in each_version(items, f"detect ({model.name})"):
        sents = tuple(item.sentences)
        plan = planned[sents]
        if limit is None or plan.need <= limit:
            verdict = asker.verdict(item, sents, plan)
        else:
            verdict = Verdict(math.nan, False, status=TOO_LONG)
            too_long.append(f"{item.item_id} ({plan.need} tokens)")
        score = ceeval_full(
            item.has_error,
            verdict.says,
            item.error_lines,
            item.contr_lines,
            verdict.error,
            verdict.contradicts,
        )
        rows.append(
            answer_row(
                item,
                model.name,
                p_error=verdict.p_error,
                says_error=verdict.says,
                answer=verdict.answer,
                answer_status=verdict.status,
                pred_error=list(verdict.error or []),
                pred_contr=list(verdict.contradicts or []),
                ceeval=0 if verdict.no_verdict else score,
                n_prompt_tokens=plan.tokens,
            )
        )
    _log_detection(model, len(items), asker.asked, too_long, limit, started)
    return tables.PLOT_HOLE_ANSWERS.frame(rows)


def _plan_texts(
    asker: ClosedFormat | PaperFormat, items: pd.DataFrame
) -> dict[tuple[str, ...], Planned]:
    """Each distinct story text of ``items`` (its sentences) planned once by ``asker`` (an
    answer format of :data:`FORMATS`): its prompts, tokens and the window it needs."""
    planned: dict[tuple[str, ...], Planned] = {}
    for sentences in items["sentences"]:
        sents = tuple(sentences)
        if sents not in planned:
            planned[sents] = asker.plan(sents)
    return planned


def _log_detection(
    model: LanguageModel,
    n_versions: int,
    asked: int,
    too_long: Sequence[str],
    limit: int | None,
    started: float,
) -> None:
    """Log the versions left out for the window of ``limit`` tokens (``too_long``: each with
    its tokens), and the versions asked, tokens evaluated and seconds since ``started`` (a
    :func:`time.perf_counter` reading)."""
    if too_long:
        log.warning(
            "%d story version(s) do not fit the window of %d tokens (plot_holes.detection.n_ctx, "
            "or the model's trained context): left out (answer_status too_long), listed in "
            "left_out.csv: %s",
            len(too_long),
            limit,
            ", ".join(too_long),
        )
    seconds = time.perf_counter() - started
    log.info(
        "%s: %d story versions, %d asked (window %s tokens), %d tokens evaluated, %.1f s "
        "(%.2f s per version asked, localization included)",
        model.name,
        n_versions,
        asked,
        model.window,
        model.tokens_evaluated,
        seconds,
        seconds / max(1, asked),
    )


def baseline_answers(items: pd.DataFrame, seed: int) -> pd.DataFrame:
    """PLOT_HOLE_ANSWERS rows of the ``baseline:always-no`` and ``baseline:random`` detectors."""
    rows: list[dict[str, Any]] = []
    for item in items.itertuples(index=False):
        rows.append(
            answer_row(
                item,
                "baseline:always-no",
                p_error=0.0,
                says_error=False,
                answer="",
                answer_status="not_asked",
                pred_error=[],
                pred_contr=[],
                ceeval=ceeval_full(item.has_error, False),
                n_prompt_tokens=0,
            )
        )
        rng = item_rng(seed, item.item_id)
        says = bool(rng.random() < 0.5)
        pe = [int(rng.integers(1, item.n_sentences + 1))] if says else []
        pc = [int(rng.integers(1, item.n_sentences + 1))] if says else []
        rows.append(
            answer_row(
                item,
                "baseline:random",
                p_error=0.5,
                says_error=says,
                answer="",
                answer_status="ok" if says else "not_asked",
                pred_error=pe,
                pred_contr=pc,
                ceeval=ceeval_full(
                    item.has_error, says, item.error_lines, item.contr_lines, pe, pc
                ),
                n_prompt_tokens=0,
            )
        )
    return tables.PLOT_HOLE_ANSWERS.frame(rows)
