"""The paper's maker (Ahuja et al., FlawedFictionsMaker): plot holes written by a configured model.

For each story (sentences, numbered):

0. **acts**: with ``acts: model`` (the paper's procedure) the model is shown the numbered story
   and names the lines where acts 2 and 3 begin (greedy, read by :func:`parse_acts`); an answer
   that names no valid pair of lines falls back to fixed thirds (:mod:`.acts`), recorded with
   status ``unparseable:thirds``. With ``acts: thirds`` (the default) the thirds are used;
1. **propositions**: the model lists what act 1 establishes about characters and setting
   (generated; one proposition per line starting with ``-``; none parsed = a failed step);
2. **relevance**: each proposition's relevance to acts 2-3 on the paper's 4-point scale
   (1 = no effect on acts 2-3 ... 4 = changes the whole story), read as a closed choice among
   ``1``..``4``; only propositions scored **2 or 3** are kept (:data:`RELEVANT`: the paper keeps
   propositions of moderate importance; level 4 would rewrite the whole story);
3. **counterfactual**: the story rewritten with the proposition negated (generated, up to
   :func:`rewrite_tokens` tokens, split into sentences with spaCy; empty = a failed step);
4. **patch** (:func:`patch`): act 1 of the original + acts 2-3 of the counterfactual, aligned
   sentence by sentence (difflib); S_error = the patched sentences of acts 2-3 that differ from
   the original, S_contr = the act-1 sentences the counterfactual changed;
5. **filter** (:func:`filter_reason`): drop an edit whose counterfactual changed no act-1
   sentence (the proposition was not located: no S_contr), left act 2 **or** act 3 unchanged
   (A2 = A2¬φ or A3 = A3¬φ), has no changed line in acts 2-3, or made more than
   ``max_changed`` changes (changed, inserted or deleted sentences over the whole story); then
   keep it only when the model, shown the **whole patched story** with the modified lines of
   acts 2-3 marked (:func:`marked_story`), says that those lines introduce a continuity error
   in at least ``judge_min_yes`` of ``judge_samples`` samples (:func:`parse_verdict`).

Every prompt and raw output is recorded (PLOT_HOLE_ATTEMPTS), with the status of each step
(``dropped:<reason>`` for a filtered edit); the first edit of a story that passes the filter is
kept (versions O and F), labelled ``unverified`` until a human verdict is read back
(:mod:`.review`). A story whose prompts and answers do not fit the model's window is skipped
with its reason.
"""

from __future__ import annotations

import json
import logging
import math
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
from storyflow.measures.plot_holes.acts import act_bounds
from storyflow.measures.plot_holes.ceeval import parse_verdict
from storyflow.measures.plot_holes.review import review_sheet
from storyflow.sentences import load_spacy
from storyflow.settings import settings_from

log = logging.getLogger(__name__)

MAKER = "model"
STEPS = ("acts", "propositions", "relevance", "counterfactual", "filter", "judge")
#: How the model maker finds a story's three acts: fixed thirds, or asked of the model.
ACT_SPLITS = ("thirds", "model")

#: The relevance scale (1 = no effect on acts 2-3 ... 4 = changes the whole story) and the
#: levels kept (the paper's moderate importance: 2 and 3).
RELEVANCE_SCALE = ("1", "2", "3", "4")
RELEVANT = (2, 3)

#: How a modified line is marked in the story the judge reads.
MARK = "[modified]"

#: Tokens of the acts answer ("Act 2: 4, Act 3: 9").
ACTS_TOKENS = 24


@dataclass(frozen=True)
class Patch:
    """The patched story and its ground truth (0-based sentence indices).

    ``error``: patched sentences of acts 2-3 that differ from the original (S_error);
    ``contradicted``: act-1 sentences the counterfactual changed (S_contr; empty when it changed
    none); ``changed_acts``: whether act 2 and act 3 of the counterfactual differ from the
    original's (A2 ≠ A2¬φ, A3 ≠ A3¬φ); ``n_changes``: changed, inserted or deleted sentences of
    the counterfactual against the original, over the whole story."""

    sentences: list[str]
    error: list[int]
    contradicted: list[int]
    changed_acts: tuple[bool, bool] = (True, True)
    n_changes: int = 0


def _at(opcodes: Sequence[tuple[str, int, int, int, int]], i: int, n_b: int) -> int:
    """The position in b that corresponds to position ``i`` of a."""
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 <= i < i2:
            return j1 + (i - i1 if tag == "equal" else round((i - i1) * (j2 - j1) / (i2 - i1)))
    return n_b


def _changes(opcodes: Sequence[tuple[str, int, int, int, int]]) -> int:
    """Sentences changed, inserted or deleted by ``opcodes`` (a replacement of k by m: max)."""
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")


def patch(original: Sequence[str], counterfactual: Sequence[str], bounds: tuple[int, int]) -> Patch:
    """Act 1 of ``original`` + acts 2-3 of ``counterfactual`` (sentence lists); ``bounds``: the
    original's first sentence of act 2 and of act 3 (0-based, :func:`.acts.act_bounds`). See
    the module docstring for the ground truth. A sentence inserted before original sentence i
    belongs to i's act (at the end of the story: act 3)."""
    act1_len, act3 = bounds
    matcher = SequenceMatcher(a=list(original), b=list(counterfactual), autojunk=False)
    j = _at(matcher.get_opcodes(), act1_len, len(counterfactual))
    tail = list(counterfactual[j:])
    later = SequenceMatcher(a=list(original[act1_len:]), b=tail, autojunk=False).get_opcodes()
    error = [act1_len + k for tag, _, _, j1, j2 in later if tag != "equal" for k in range(j1, j2)]
    changed = {2: False, 3: False}
    for tag, i1, i2, _, _ in later:
        if tag == "equal":
            continue
        positions = range(act1_len + i1, act1_len + i2) if i2 > i1 else [act1_len + i1]
        for pos in positions:
            changed[2 if pos < act3 else 3] = True
    first = SequenceMatcher(
        a=list(original[:act1_len]), b=list(counterfactual[:j]), autojunk=False
    ).get_opcodes()
    contradicted = [k for tag, i1, i2, _, _ in first if tag != "equal" for k in range(i1, i2)]
    return Patch(
        list(original[:act1_len]) + tail,
        error,
        contradicted,
        (changed[2], changed[3]),
        _changes(first) + _changes(later),
    )


def filter_reason(edit: Patch, max_changed: int) -> str | None:
    """Why an edit is dropped before the judge (None: it passes); see the module docstring."""
    if not edit.contradicted:
        return "act 1 unchanged (the proposition was not located: no contradicted line)"
    acts = zip(("act 2", "act 3"), edit.changed_acts, strict=True)
    unchanged = [name for name, changed in acts if not changed]
    if unchanged:
        return f"{' and '.join(unchanged)} unchanged"
    if not edit.error:
        return "no changed line in acts 2-3 (only deletions)"
    if edit.n_changes > max_changed:
        return f"{edit.n_changes} changes (more than {max_changed})"
    return None


def marked_story(sentences: Sequence[str], modified: Sequence[int]) -> str:
    """The story as numbered lines, each modified line (0-based indices) marked with
    :data:`MARK`: ``5. [modified] She ...``."""
    marked = set(modified)
    return "\n".join(
        f"{i + 1}. {MARK + ' ' if i in marked else ''}{s}" for i, s in enumerate(sentences)
    )


def parse_propositions(text: str, limit: int) -> list[str]:
    """Lines of ``text`` that start with ``-``, ``*`` or ``1.``, stripped (at most ``limit``)."""
    found = [m.group(1).strip() for m in re.finditer(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", text, re.M)]
    return [p for p in found if p][:limit]


def parse_acts(text: str, n_sentences: int) -> tuple[int, int] | None:
    """The acts' bounds (first sentence of act 2, first of act 3; 0-based) from an answer naming
    the lines (1-based) where acts 2 and 3 begin: ``Act 2: 4, Act 3: 9`` or the first two
    numbers of the answer. None unless 2 <= act 2 < act 3 <= ``n_sentences`` (each act holds a
    sentence)."""
    named = {
        int(act): int(line)
        for act, line in re.findall(r"act\s*([23])\D{0,20}?(\d+)", text or "", re.I)
    }
    if {2, 3} <= set(named):
        a2, a3 = named[2], named[3]
    else:
        numbers = [int(n) for n in re.findall(r"\d+", text or "")]
        if len(numbers) < 2:
            return None
        a2, a3 = numbers[:2]
    if not 2 <= a2 < a3 <= n_sentences:
        return None
    return a2 - 1, a3 - 1


def rewrite_tokens(story_tokens: int, minimum: int) -> int:
    """Tokens allowed for the counterfactual rewrite of a story of ``story_tokens`` tokens: the
    story's length plus a quarter and 64 (a rewrite is about as long as the story), at least
    ``minimum`` (``model_maker.max_tokens``)."""
    return max(int(minimum), math.ceil(story_tokens * 1.25) + 64)


@dataclass(frozen=True)
class MakerSettings:
    """Prompts (templates with ``{act1}``, ``{later}``, ``{story}``, ``{proposition}``,
    ``{lines}``) and limits of the model maker (config ``plot_holes.model_maker``):
    ``acts``: how the acts are found (:data:`ACT_SPLITS`); ``max_tokens``: tokens of the
    proposition list (and the least a rewrite may get); ``judge_max_tokens``: tokens of each
    judge sample (its reasoning and verdict); ``seed`` and ``min_sentences``: those of
    ``plot_holes``. Defaults and ranges are the config schema's."""

    prompts: Mapping[str, str]
    acts: str
    max_propositions: int
    attempts: int
    max_changed: int
    judge_samples: int
    judge_min_yes: int
    judge_max_tokens: int
    temperature: float
    max_tokens: int
    seed: int
    min_sentences: int

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any], *, seed: int, min_sentences: int
    ) -> MakerSettings:
        """The settings of the validated ``plot_holes.model_maker`` (its ``model`` and
        ``verdicts`` are not read) with ``plot_holes.seed`` and ``plot_holes.min_sentences``."""
        return settings_from(
            cls, params, where="plot_holes.model_maker", seed=seed, min_sentences=min_sentences
        )


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

    def needed_window(self, sentences: Sequence[str]) -> int:
        """Tokens the longest step of one story needs (prompt + answer): the rewrite (story
        prompt + :func:`rewrite_tokens`) or the judge (marked story + its answer); the acts
        question is shorter than the judge's."""
        story = " ".join(sentences)
        rewrite = self._prompt("counterfactual", story=story, proposition="x " * 48)
        judge = self._prompt(
            "judge", story=marked_story(sentences, range(len(sentences))), lines="1"
        )
        propositions = self._prompt("propositions", act1=story, story=story)
        story_tokens = self.model.count_text(story)
        return max(
            self.model.count(rewrite) + rewrite_tokens(story_tokens, self.s.max_tokens),
            self.model.count(judge) + self.s.judge_max_tokens,
            self.model.count(propositions) + self.s.max_tokens,
        )

    def _relevance(self, story_id: str, prop: str, act1: str, later: str) -> int:
        prompt = self._prompt("relevance", proposition=prop, act1=act1, later=later)
        options = RELEVANCE_SCALE if self.mode == "chat" else [" " + o for o in RELEVANCE_SCALE]
        choice = self.model.answer(prompt, options)
        score = int(choice.best.strip())
        self._record(
            story_id,
            0,
            "relevance",
            "ok",
            prompt,
            json.dumps({"proposition": prop, "score": score, "probs": choice.probs}),
        )
        return score

    def _acts(self, story_id: str, sentences: Sequence[str], thirds: tuple[int, int]):
        """The acts' bounds the model names (:func:`parse_acts`), else ``thirds`` (recorded)."""
        prompt = self._prompt("acts", story=marked_story(sentences, ()), n=str(len(sentences)))
        text = self._generate(prompt, max_tokens=ACTS_TOKENS)[0]
        bounds = parse_acts(text, len(sentences))
        status = "ok" if bounds is not None else "unparseable:thirds"
        self._record(story_id, 0, "acts", status, prompt, text)
        return bounds if bounds is not None else thirds

    def make(
        self, story_id: str, sentences: Sequence[str], window: int | None = None
    ) -> tuple[Patch, str] | str:
        """The kept edit and its proposition, or the reason the story has none. ``window``:
        the tokens a story's steps may take (None: no limit)."""
        bounds = act_bounds(len(sentences), self.s.min_sentences)
        if bounds is None:
            return f"too short for three acts ({len(sentences)} sentences)"
        if window is not None and (need := self.needed_window(sentences)) > window:
            return f"too long for the model's window ({need} tokens needed, {window} available)"
        if self.s.acts == "model":
            bounds = self._acts(story_id, sentences, bounds)
        a2, _ = bounds
        act1 = " ".join(sentences[:a2])
        later, story = " ".join(sentences[a2:]), " ".join(sentences)
        prompt = self._prompt("propositions", act1=act1, story=story)
        text = self._generate(prompt)[0]
        props = parse_propositions(text, self.s.max_propositions)
        self._record(story_id, 0, "propositions", "ok" if props else "unparseable", prompt, text)
        if not props:
            return "propositions: no proposition could be parsed"
        relevant = [p for p in props if self._relevance(story_id, p, act1, later) in RELEVANT]
        if not relevant:
            return "relevance: no proposition scored 2 or 3 (of 1-4)"
        budget = rewrite_tokens(self.model.count_text(story), self.s.max_tokens)
        reasons = []
        for attempt, prop in enumerate(relevant[: self.s.attempts], start=1):
            prompt = self._prompt("counterfactual", story=story, proposition=prop)
            text = self._generate(prompt, temperature=self.s.temperature, max_tokens=budget)[0]
            rewritten = [s.text.strip() for s in self.nlp(text.strip()).sents if s.text.strip()]
            if not rewritten:
                self._record(story_id, attempt, "counterfactual", "unparseable", prompt, text)
                reasons.append("counterfactual unparseable")
                continue
            self._record(story_id, attempt, "counterfactual", "ok", prompt, text)
            edit = patch(sentences, rewritten, bounds)
            reason = filter_reason(edit, self.s.max_changed)
            self._record(
                story_id,
                attempt,
                "filter",
                f"dropped:{reason}" if reason else "ok",
                "",
                json.dumps(
                    {
                        "error": edit.error,
                        "contradicted": edit.contradicted,
                        "changed_acts": list(edit.changed_acts),
                        "n_changes": edit.n_changes,
                    }
                ),
            )
            if reason:
                reasons.append(reason)
                continue
            prompt = self._prompt(
                "judge",
                story=marked_story(edit.sentences, edit.error),
                lines=", ".join(str(i + 1) for i in edit.error),
            )
            votes = [
                parse_verdict(t)
                for t in self._generate(
                    prompt,
                    k=self.s.judge_samples,
                    temperature=self.s.temperature,
                    max_tokens=self.s.judge_max_tokens,
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
            reasons.append(f"judge {yes}/{len(votes)} yes")
        return "no edit passed the filter (" + "; ".join(reasons) + ")"


def maker_window(maker: ModelMaker, by_story: Mapping[str, Sequence[str]]) -> int | None:
    """The window a local maker model is opened with: the longest need of the stories that fit
    the model's trained context (:meth:`ModelMaker.needed_window`), rounded up to 64; None for
    a served model (the server decides). Stories beyond it are skipped by :meth:`make`."""
    model = maker.model
    if model.window is None:
        return None
    limit = model.training_window() or model.window
    needs = [
        maker.needed_window(s)
        for s in by_story.values()
        if act_bounds(len(s), maker.s.min_sentences) is not None
    ]
    fitting = [n for n in needs if n <= limit]
    return min(limit, -(-max(fitting, default=256) // 64) * 64)


def make_with_model(
    maker: ModelMaker, sentences: pd.DataFrame, stories: pd.DataFrame, model: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(PLOT_HOLE_STORIES, PLOT_HOLE_SKIPPED, PLOT_HOLE_ATTEMPTS) of the model maker.

    A local model's window is sized to the stories first (:func:`maker_window`: before its
    weights load); a story that does not fit it (or a served model's trained context, when
    known) is skipped with the tokens it needs."""
    by_story = {
        sid: g.sort_values("sentence_idx")["text"].tolist()
        for sid, g in sentences.groupby("story_id", sort=False)
    }
    window = maker_window(maker, by_story)
    if window is not None:
        maker.model.n_ctx = window
        log.info("model maker: window %d tokens (the longest story that fits)", window)
    else:
        window = maker.model.training_window()
    made, skipped = [], []
    texts = dict(zip(stories["story_id"].astype(str), stories["text"], strict=True))
    for story_id in tqdm(list(texts), desc=f"model maker ({model})", unit="story", file=sys.stderr):
        sents = by_story.get(story_id, [])
        result = maker.make(story_id, sents, window)
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
    reasons = pd.Series([r[2].split(" (")[0] for r in skipped]).value_counts().to_dict()
    log.info(
        "model maker: %d stories, %d made, %d skipped %s; step statuses %s",
        len(texts),
        len(made) // 2,
        len(skipped),
        reasons,
        counts,
    )
    return (
        tables.PLOT_HOLE_STORIES.frame(made),
        tables.PLOT_HOLE_SKIPPED.frame(skipped),
        tables.PLOT_HOLE_ATTEMPTS.frame(maker.log),
    )


def make_plot_holes(
    model: Any,
    sentences: pd.DataFrame,
    stories: pd.DataFrame,
    settings: Mapping[str, Any],
    *,
    seed: int,
    min_sentences: int,
    spacy_model: str,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The model maker on a corpus (rule ``make_model_plot_holes``).

    Args:
        model: The maker's model (a :class:`storyflow.lm.connect.LanguageModel`); a local
            model's window is sized to the stories before its weights load
            (:func:`maker_window`).
        sentences: The corpus's sentences (:data:`tables.SENTENCES`).
        stories: Its stories (``story_id``, ``text``).
        settings: ``plot_holes.model_maker`` without ``model`` and ``verdicts``
            (:meth:`MakerSettings.from_params`).
        seed: ``plot_holes.seed``.
        min_sentences: ``plot_holes.min_sentences``.
        spacy_model: The spaCy pipeline that splits the rewrites into sentences.

    Returns:
        ``(made, skipped, attempts, sheet)``: :func:`make_with_model`'s three tables and the
        review sheet of the flawed versions (:func:`.review.review_sheet`).
    """
    maker = ModelMaker(
        model,
        load_spacy(spacy_model),
        MakerSettings.from_params(settings, seed=seed, min_sentences=min_sentences),
    )
    made, skipped, attempts = make_with_model(maker, sentences, stories, model.name)
    return made, skipped, attempts, review_sheet(made)
