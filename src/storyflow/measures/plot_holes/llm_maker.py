"""The paper's maker (Ahuja et al.): plot holes written by a configured model.

For each story (sentences, three acts from :mod:`.acts`):

1. **propositions**: the model lists what act 1 establishes about characters and setting
   (generated; one proposition per line starting with ``-``; none parsed = a failed step);
2. **relevance**: each proposition's relevance to acts 2-3 on the 4-point scale 0-3, read as a
   closed choice among ``0``..``3``; propositions scored 2 or 3 are kept;
3. **counterfactual**: the story rewritten with the proposition negated (generated, split into
   sentences with spaCy; empty = a failed step);
4. **patch** (:func:`patch`): act 1 of the original + acts 2-3 of the counterfactual, aligned
   sentence by sentence (difflib); S_error = the patched sentences of acts 2-3 that differ from
   the original, S_contr = the act-1 sentences the counterfactual changed (all of act 1 when it
   changed none);
5. **filter** (:func:`filter_reason`): drop an edit whose acts 2-3 did not change or changed in
   more than ``max_changed`` sentences, then keep it only when the model, shown the original
   act 1 and the changed lines, answers "yes, a continuity error" in at least ``judge_min_yes``
   of ``judge_samples`` samples.

Every prompt and raw output is recorded (PLOT_HOLE_ATTEMPTS), with the status of each step; the
first edit of a story that passes the filter is kept (versions O and F), labelled
``unverified`` until a human verdict is read back (:mod:`.review`).
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import pandas as pd
from tqdm import tqdm

from storyflow import tables
from storyflow.lm.sampling import SamplingSettings
from storyflow.measures.plot_holes.acts import split_acts

log = logging.getLogger(__name__)

MAKER = "model"
STEPS = ("propositions", "relevance", "counterfactual", "filter", "judge")


@dataclass(frozen=True)
class Patch:
    """The patched story and its ground truth (0-based sentence indices)."""

    sentences: list[str]
    error: list[int]
    contradicted: list[int]


def _at(opcodes: Sequence[tuple[str, int, int, int, int]], i: int, n_b: int) -> int:
    """The position in b that corresponds to position ``i`` of a."""
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 <= i < i2:
            return j1 + (i - i1 if tag == "equal" else round((i - i1) * (j2 - j1) / (i2 - i1)))
    return n_b


def patch(original: Sequence[str], counterfactual: Sequence[str], act1_len: int) -> Patch:
    """Act 1 of ``original`` + acts 2-3 of ``counterfactual`` (sentence lists); see the module
    docstring for the ground truth."""
    matcher = SequenceMatcher(a=list(original), b=list(counterfactual), autojunk=False)
    j = _at(matcher.get_opcodes(), act1_len, len(counterfactual))
    tail = list(counterfactual[j:])
    later = SequenceMatcher(a=list(original[act1_len:]), b=tail, autojunk=False)
    error = [
        act1_len + k
        for tag, _, _, j1, j2 in later.get_opcodes()
        if tag != "equal"
        for k in range(j1, j2)
    ]
    first = SequenceMatcher(a=list(original[:act1_len]), b=list(counterfactual[:j]), autojunk=False)
    contradicted = [
        k for tag, i1, i2, _, _ in first.get_opcodes() if tag != "equal" for k in range(i1, i2)
    ]
    return Patch(list(original[:act1_len]) + tail, error, contradicted or list(range(act1_len)))


def filter_reason(edit: Patch, max_changed: int) -> str | None:
    """Why an edit is dropped before the judge (None: it passes)."""
    if not edit.error:
        return "acts 2-3 unchanged"
    if len(edit.error) > max_changed:
        return f"{len(edit.error)} sentences changed (more than {max_changed})"
    return None


def parse_propositions(text: str, limit: int) -> list[str]:
    """Lines of ``text`` that start with ``-``, ``*`` or ``1.``, stripped (at most ``limit``)."""
    found = [m.group(1).strip() for m in re.finditer(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", text, re.M)]
    return [p for p in found if p][:limit]


def parse_yes_no(text: str) -> str | None:
    """``yes`` or ``no`` from the first word of ``text``; None otherwise."""
    word = re.match(r"\W*([A-Za-z]+)", text or "")
    value = word.group(1).lower() if word else ""
    return value if value in ("yes", "no") else None


@dataclass(frozen=True)
class MakerSettings:
    """Prompts (templates with ``{act1}``, ``{later}``, ``{story}``, ``{proposition}``,
    ``{changed}``) and limits of the model maker (config ``plot_holes.model_maker``)."""

    prompts: Mapping[str, str]
    max_propositions: int = 5
    attempts: int = 2
    max_changed: int = 5
    judge_samples: int = 5
    judge_min_yes: int = 4
    temperature: float = 0.7
    max_tokens: int = 512
    seed: int = 0
    min_sentences: int = 6

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any], *, seed: int, min_sentences: int
    ) -> MakerSettings:
        """The settings of ``plot_holes.model_maker`` (without ``model`` and ``verdicts``)."""
        return cls(**params, seed=int(seed), min_sentences=int(min_sentences))


class ModelMaker:
    """Runs the steps with one model (a :class:`storyflow.lm.connect.LanguageModel`)."""

    def __init__(self, model: Any, nlp: Any, settings: MakerSettings) -> None:
        self.model, self.nlp, self.s = model, nlp, settings
        self.mode = model.mode
        self.log: list[tuple] = []

    def _prompt(self, step: str, **fields: str) -> Any:
        text = self.s.prompts[step].format(**fields)
        return self.model.render([{"role": "user", "content": text}], cue="Answer:")

    def _generate(
        self,
        prompt: str,
        k: int = 1,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stop: tuple[str, ...] = (),
    ) -> list[str]:
        settings = SamplingSettings(
            temperature=temperature,
            max_tokens=max_tokens or self.s.max_tokens,
            stop=stop,
            seed=self.s.seed,
        )
        return [s.text for s in self.model.sample(prompt, k, settings)]

    def _record(self, story: str, attempt: int, step: str, status: str, prompt: Any, output: str):
        text = prompt if isinstance(prompt, str) else prompt.text  # messages for a chat API
        self.log.append((story, attempt, step, status, text, output))

    def make(self, story_id: str, sentences: Sequence[str]) -> tuple[Patch, str] | str:
        """The kept edit and its proposition, or the reason the story has none."""
        acts = split_acts(sentences, self.s.min_sentences)
        if acts is None:
            return f"too short for three acts ({len(sentences)} sentences)"
        act1, later, story = " ".join(acts[0]), " ".join(acts[1] + acts[2]), " ".join(sentences)
        prompt = self._prompt("propositions", act1=act1, story=story)
        text = self._generate(prompt)[0]
        props = parse_propositions(text, self.s.max_propositions)
        self._record(story_id, 0, "propositions", "ok" if props else "unparseable", prompt, text)
        if not props:
            return "propositions: no proposition could be parsed"
        relevant = []
        for prop in props:
            prompt = self._prompt("relevance", proposition=prop, act1=act1, later=later)
            choice = self.model.answer(
                prompt, ["0", "1", "2", "3"] if self.mode == "chat" else [" 0", " 1", " 2", " 3"]
            )
            score = int(choice.best.strip())
            self._record(
                story_id,
                0,
                "relevance",
                "ok",
                prompt,
                json.dumps({"proposition": prop, "score": score, "probs": choice.probs}),
            )
            if score >= 2:
                relevant.append(prop)
        if not relevant:
            return "relevance: no proposition scored 2 or 3"
        for attempt, prop in enumerate(relevant[: self.s.attempts], start=1):
            prompt = self._prompt("counterfactual", story=story, proposition=prop)
            text = self._generate(prompt, temperature=self.s.temperature)[0]
            rewritten = [s.text.strip() for s in self.nlp(text.strip()).sents if s.text.strip()]
            if not rewritten:
                self._record(story_id, attempt, "counterfactual", "unparseable", prompt, text)
                continue
            self._record(story_id, attempt, "counterfactual", "ok", prompt, text)
            edit = patch(sentences, rewritten, len(acts[0]))
            reason = filter_reason(edit, self.s.max_changed)
            self._record(
                story_id,
                attempt,
                "filter",
                f"dropped:{reason}" if reason else "ok",
                "",
                json.dumps({"error": edit.error, "contradicted": edit.contradicted}),
            )
            if reason:
                continue
            changed = "\n".join(f"{i + 1}. {edit.sentences[i]}" for i in edit.error)
            prompt = self._prompt("judge", act1=act1, changed=changed)
            votes = [
                parse_yes_no(t)
                for t in self._generate(
                    prompt, k=self.s.judge_samples, temperature=self.s.temperature, max_tokens=4
                )
            ]
            yes = sum(v == "yes" for v in votes)
            ok = yes >= self.s.judge_min_yes
            self._record(
                story_id,
                attempt,
                "judge",
                "ok" if ok else f"dropped:judge {yes}/{len(votes)}",
                prompt,
                json.dumps(votes),
            )
            if ok:
                return edit, prop
        return "no edit passed the filter"


def make_with_model(
    maker: ModelMaker, sentences: pd.DataFrame, stories: pd.DataFrame, model: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(PLOT_HOLE_STORIES, PLOT_HOLE_SKIPPED, PLOT_HOLE_ATTEMPTS) of the model maker."""
    by_story = {
        sid: g.sort_values("sentence_idx")["text"].tolist()
        for sid, g in sentences.groupby("story_id", sort=False)
    }
    made, skipped = [], []
    texts = dict(zip(stories["story_id"].astype(str), stories["text"], strict=True))
    for story_id in tqdm(list(texts), desc=f"model maker ({model})", unit="story", file=sys.stderr):
        sents = by_story.get(story_id, [])
        result = maker.make(story_id, sents)
        if isinstance(result, str):
            skipped.append((story_id, MAKER, result))
            continue
        edit, prop = result
        provenance = json.dumps(
            {"maker": MAKER, "model": model, "seed": maker.s.seed, "counterfactual_of": prop},
            sort_keys=True,
        )
        target = edit.error[0]
        for version, sents_v, flawed in (("O", sents, False), ("F", edit.sentences, True)):
            made.append(
                (
                    story_id,
                    f"{story_id}:{MAKER}:{version}",
                    MAKER,
                    version,
                    flawed,
                    len(sents_v),
                    list(sents_v),
                    [i + 1 for i in edit.error] if flawed else [],
                    [i + 1 for i in edit.contradicted] if flawed else [],
                    target,
                    "proposition",
                    f"not ({prop})",
                    texts[story_id],
                    "unverified",
                    provenance,
                )
            )
    counts = pd.Series([r[3] for r in maker.log]).value_counts().to_dict() if maker.log else {}
    log.info(
        "model maker: %d stories, %d made, %d skipped; step statuses %s",
        len(texts),
        len(made) // 2,
        len(skipped),
        counts,
    )
    return (
        tables.PLOT_HOLE_STORIES.frame(made),
        tables.PLOT_HOLE_SKIPPED.frame(skipped),
        tables.PLOT_HOLE_ATTEMPTS.frame(maker.log),
    )
