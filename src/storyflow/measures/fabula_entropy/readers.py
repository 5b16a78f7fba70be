"""Language-model readers: P(yes) for every question about every story version.

A *reader* is a (model, prompt variant) pair. Its answer to a question is read from the answer
probabilities (closed choice, :mod:`storyflow.lm.answers`), never sampled:

    P(yes) = Σ_v P(v | prompt) over the yes labels / Σ over the yes and no labels

with the label variants from config (``{"yes": ["Yes", "yes"], "no": ["No", "no"]}``; plain
prompts of base models put a space before each, since the answer continues the cue's line).
``mass`` (the labels' share of the model's probability) is kept, and a row with mass below
``min_mass`` is flagged. Prompt variants: ``standard`` ends "Answer Yes or No.", ``swapped``
"Answer No or Yes." (the label order, against a position bias), ``negated`` asks the negated
twin ("Is the answer to the following question no? ...") and reads P(yes) = 1 − P(label yes),
so a reader that always says yes lands on opposite sides in ``standard`` and ``negated``.
With ``calibration`` each P is corrected for the reader's prior P₀ on the question, read from a
content-free passage (every line "N/A"; Zhao et al. 2021): P_cal = (P/P₀) / (P/P₀ +
(1−P)/(1−P₀)), i.e. logit P_cal = logit P − logit P₀. Two ways to get P₀:

- ``question``: the question itself about the content-free passage, once per question text,
  variant and number of lines (ETC questions, which name line numbers only, share it across
  stories; controls and EWC questions, whose text holds a word or quoted lines, mostly do not);
- ``template``: the question's *prior texts* (:func:`.questions.prior_texts`: its content
  replaced by fillers, line numbers kept) about the content-free passage, once per prior text,
  variant and number of lines: a few dozen prompts per corpus whatever its size.

The story comes first in the prompt and the question last, so the questions about one version
share the story's tokens: they are asked in one call, and the model (opened with
``share_prefix``) evaluates the story once and branches the questions from it in one batch
(docs/lm.md, "Shared prefixes"); the content-free priors of one variant and passage length
likewise.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy import questions as questions_module
from storyflow.progress import LoggedBar
from storyflow.settings import FromParams

log = logging.getLogger(__name__)

SYSTEM = "You are a careful reader. Read the story, then answer the question about it."
INSTRUCTIONS = {
    "standard": "Answer Yes or No.",
    "swapped": "Answer No or Yes.",
    "negated": "Answer Yes or No.",
}
#: Variants that ask the negated twin of each question; their P(yes) is 1 − P(label yes).
NEGATED = frozenset({"negated"})
CUE = "Answer:"
CONTENT_FREE = questions_module.CONTENT_FREE
#: ``fabula_entropy.calibration``: no correction, a prior per question, a prior per template.
CALIBRATIONS = ("none", "question", "template")


@dataclass(frozen=True)
class ReaderSettings(FromParams):
    """How readers answer (config ``fabula_entropy``): ``variants`` (prompt variants, keys of
    :data:`INSTRUCTIONS`), ``labels`` (yes/no label variants), ``calibration`` (one of
    :data:`CALIBRATIONS`), ``min_mass`` (flag threshold, 0-1), ``n_ctx`` (context window in
    tokens)."""

    WHERE = "fabula_entropy"

    variants: tuple[str, ...]
    labels: Mapping[str, Sequence[str]]
    calibration: str
    min_mass: float
    n_ctx: int


def twin(question: str) -> str:
    """The negated twin of a question: true exactly when the question's answer is no."""
    return f"Is the answer to the following question no? {question}"


def messages(lines: Sequence[str], question: str, variant: str) -> list[dict[str, str]]:
    """The reader's prompt: the story's numbered lines, then the question (its negated twin for
    the ``negated`` variant) and the instruction."""
    story = "\n".join(f"{n}. {line}" for n, line in enumerate(lines, start=1))
    question = twin(question) if variant in NEGATED else question
    user = f"Story:\n{story}\n\nQuestion: {question}\n{INSTRUCTIONS[variant]}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def label_options(labels: Mapping[str, Sequence[str]], mode: str) -> dict[str, list[str]]:
    """The answer options: the configured label variants, with a leading space in plain mode."""
    space = " " if mode == "plain" else ""
    return {name: [space + v.strip() for v in labels[name]] for name in ("yes", "no")}


def check_labels(model: Any, options: Mapping[str, Sequence[str]]) -> None:
    """Every label must tokenize and read back unchanged in the model's vocabulary (checked
    where the vocabulary is on this machine; a served model's server tokenizes)."""
    tokenizer = model.tokenizer  # storyflow.lm.tokenizer.Tokenizer
    if tokenizer is None:
        return
    bad = []
    for variants in options.values():
        for label in variants:
            ids = tokenizer.encode(label)
            back = tokenizer.decode(ids) if ids else ""
            if not ids or back != label:
                bad.append(label)
    if bad:
        raise StoryflowError(
            f"model {model.name!r}: the answer labels {bad} are not in its vocabulary (they do "
            "not tokenize and read back unchanged); set fabula_entropy.labels to words it has"
        )


def calibrated(p: float, p0: float) -> float:
    """P(yes) corrected for the content-free prior ``p0`` (both in (0, 1))."""
    p0 = min(max(p0, 1e-6), 1 - 1e-6)
    yes, no = p / p0, (1 - p) / (1 - p0)
    return float(yes / (yes + no)) if yes + no > 0 else 0.5


class _Reader:
    """One model reading a corpus's passages: its answer options, the longest option (to check
    a prompt fits the window) and the reading settings (:func:`answer_questions`)."""

    def __init__(self, model: Any, settings: ReaderSettings) -> None:
        self.model, self.settings, self.name = model, settings, model.name
        self.options = label_options(settings.labels, model.mode)
        check_labels(model, self.options)
        self.longest = max(model.count_text(v) for vs in self.options.values() for v in vs)

    def p_yes(
        self, lines: Sequence[str], asked: Sequence[tuple[str, str]], variant: str
    ) -> list[tuple[float, float]]:
        """(P(yes), label mass) of each (question, where) about one passage, asked together
        (one call: the passage's tokens once, the questions branched from it)."""
        model, prompts = self.model, []
        for question, where in asked:
            prompt = model.render(messages(lines, question, variant), cue=CUE)
            if model.window is not None and model.count(prompt) + self.longest > model.window:
                raise StoryflowError(
                    f"{where}: the prompt has {model.count(prompt)} tokens, more than "
                    f"fabula_entropy.n_ctx ({model.window}) allows; raise n_ctx or lower the "
                    "corpus's lines"
                )
            prompts.append(prompt)
        out = []
        for result in model.answers(prompts, self.options):
            yes = result.probs[0]
            out.append((1.0 - yes if variant in NEGATED else yes, result.mass))
        return out

    def prior_keys(self, q: Any, variant: str, n_lines: int) -> list[tuple[str, str, int]]:
        """The content-free priors that calibrate question ``q``: (text, variant, lines)."""
        if self.settings.calibration == "none":
            return []
        texts = [q.text] if self.settings.calibration == "question" else q.prior_texts.split("\n")
        return [(t, variant, n_lines) for t in texts]

    def answers(
        self, versions: pd.DataFrame, questions: pd.DataFrame
    ) -> tuple[list[dict[str, Any]], list[list[tuple[str, str, int]]]]:
        """One :data:`tables.FEI_ANSWERS` record per question and variant (uncalibrated), and
        the priors each needs; the questions about one passage asked together."""
        text = {
            (r.story_id, r.version, r.passage): r.text.split("\n") for r in versions.itertuples()
        }
        rows, needs = [], []
        groups = questions.groupby(["story_id", "version", "passage"], sort=False)
        for (sid, version, passage), group in LoggedBar(
            groups, total=groups.ngroups, desc=f"answers {self.name}"
        ):
            lines = text[(sid, version, passage)]
            asked = [
                (q.text, f"model {self.name}, story {sid}, version {version}, {q.question_id}")
                for q in group.itertuples(index=False)
            ]
            for variant in self.settings.variants:
                answered = self.p_yes(lines, asked, variant)
                for q, (p, mass) in zip(group.itertuples(index=False), answered, strict=True):
                    rows.append(
                        tables.FEI_ANSWERS.row(
                            story_id=sid, version=version, question_id=q.question_id,
                            model=self.name, variant=variant, reader=f"{self.name}/{variant}",
                            p_yes=p, p_yes_raw=p, mass=mass,
                            low_mass=mass < self.settings.min_mass,
                        )
                    )  # fmt: skip
                    needs.append(self.prior_keys(q, variant, len(lines)))
        return rows, needs

    def priors(
        self, needs: Sequence[Sequence[tuple[str, str, int]]]
    ) -> dict[tuple[str, str, int], float]:
        """P(yes) of each content-free prior (text, variant, lines) ``needs`` names; those of
        one variant and number of lines asked together (they share the content-free passage)."""
        wanted = sorted({key for keys in needs for key in keys}, key=lambda k: (k[1], k[2], k[0]))
        by_passage: dict[tuple[str, int], list[str]] = {}
        for question, variant, n_lines in wanted:
            by_passage.setdefault((variant, n_lines), []).append(question)
        prior: dict[tuple[str, str, int], float] = {}
        for (variant, n_lines), texts in LoggedBar(
            by_passage.items(), desc=f"priors {self.name}", disable=not wanted
        ):
            asked = [
                (t, f"model {self.name}, content-free prior of {t!r} ({n_lines} lines)")
                for t in texts
            ]
            answered = self.p_yes([CONTENT_FREE] * n_lines, asked, variant)
            for question, (p, _) in zip(texts, answered, strict=True):
                prior[(question, variant, n_lines)] = p
        return prior


def answer_questions(
    model: Any,
    versions: pd.DataFrame,
    questions: pd.DataFrame,
    settings: ReaderSettings,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """P(yes) of every question for each prompt variant, and the cost row of the model.

    ``model``: a :class:`storyflow.lm.connect.LanguageModel` (a local one opened with
    ``share_prefix``: the questions about one passage are asked in one call, the passage
    evaluated once and the questions branched from it). The questions are answered first, then
    the content-free priors; with calibration on, ``p_yes`` is ``p_yes_raw`` calibrated by the
    mean of its priors. Returns (answers, cost) as :data:`tables.FEI_ANSWERS` and
    :data:`tables.FEI_COST`.
    """
    reader = _Reader(model, settings)
    start, tokens0 = time.perf_counter(), model.tokens_evaluated
    rows, needs = reader.answers(versions, questions)
    prior = reader.priors(needs)
    for row, keys in zip(rows, needs, strict=True):
        if keys:  # p_yes from p_yes_raw and its priors
            row["p_yes"] = calibrated(row["p_yes_raw"], float(np.mean([prior[k] for k in keys])))
    n_answers = len(rows) + len(prior)
    seconds = time.perf_counter() - start
    tokens = model.tokens_evaluated - tokens0
    answers = tables.FEI_ANSWERS.frame(rows)
    cost = tables.FEI_COST.frame(
        [
            tables.FEI_COST.row(
                model=reader.name, n_questions=len(questions), n_answers=n_answers,
                n_calibration=len(prior), seconds=seconds,
                answers_per_second=n_answers / seconds if seconds > 0 else np.nan,
                tokens_evaluated=tokens,
            )
        ]
    )  # fmt: skip
    log.info(
        "%s: %d answers (%d questions × %d variants + %d content-free priors, calibration %s) "
        "in %.1f s: %.2f answers/s, %d tokens",
        reader.name,
        n_answers,
        len(questions),
        len(settings.variants),
        len(prior),
        settings.calibration,
        seconds,
        n_answers / max(seconds, 1e-9),
        tokens,
    )
    if answers["low_mass"].any():
        log.warning(
            "%s: %d of %d answers have label mass below %.2f",
            reader.name,
            int(answers["low_mass"].sum()),
            len(answers),
            settings.min_mass,
        )
    return answers, cost


def answer_corpus(
    spec: Any,
    model_path: str | None,
    versions: pd.DataFrame,
    questions: pd.DataFrame,
    reading: Mapping[str, Any],
    *,
    n_threads: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every answer of one reader model ``spec`` (a ``ModelSpec``; ``model_path`` its GGUF, None
    when served; on the device its ``device.n_gpu_layers`` says, as :func:`open_model` opens
    it) about a corpus, with the story prefix shared across its questions."""
    from storyflow.lm.connect import open_model

    settings = ReaderSettings.from_params(reading)
    model = open_model(
        spec,
        model_path,
        n_ctx=settings.n_ctx,
        n_threads=n_threads,
        share_prefix=True,
    )
    return answer_questions(model, versions, questions, settings)
