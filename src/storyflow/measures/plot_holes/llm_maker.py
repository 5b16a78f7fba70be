"""The paper's maker (Ahuja et al., FlawedFictionsMaker): plot holes written by a configured model.

For each story (sentences, numbered):

0. **acts**: with ``acts: model`` (the paper's procedure) the model is shown the numbered story
   and names the lines where acts 2 and 3 begin (greedy, read by :func:`parse_acts`); an answer
   that names no valid pair of lines falls back to fixed thirds (:mod:`.acts`), recorded with
   status ``unparseable:thirds``. With ``acts: thirds`` (the default) the thirds are used;
   The paper's prompt names the first line of each act instead; :func:`parse_acts` reads either
   (quoted first lines are matched to the sentences);
1. **propositions**: the model lists what act 1 establishes about characters and setting
   (generated; one proposition per line starting with ``-``, at most ``max_propositions``,
   None = all; none parsed = a failed step). A line ``Fact: <fact>; Counterfactual: <its
   counterfactual>`` (the paper's format) gives both (:func:`parse_proposition`);
2. **relevance**: each proposition's relevance to acts 2-3 on the paper's 4-point scale
   (1 = no effect on acts 2-3 ... 4 = changes the whole story); only propositions scored **2 or
   3** are kept (:data:`RELEVANT`: the paper keeps propositions of moderate importance; level 4
   would rewrite the whole story). ``relevance: closed``: one question per proposition, read as
   a closed choice among ``1``..``4``; ``reasoned`` (the paper): one answer for all of them,
   reasoning about each before its score, read by :func:`parse_importance` (a proposition
   without a readable score is not kept, recorded);
3. **counterfactual**: the story rewritten with the proposition negated (generated, up to
   :func:`rewrite_tokens` tokens; the rewrite is the text after a ``Counterfactual Story``
   heading when there is one, without act headings and ``<m>`` marks, :func:`parse_rewrite`;
   split into sentences with spaCy; empty = a failed step). Relevant propositions are tried in
   order, at most ``attempts`` (None = all), until one passes;
4. **patch** (:func:`patch`): act 1 of the original + acts 2-3 of the counterfactual, aligned
   sentence by sentence (difflib); S_error = the patched sentences of acts 2-3 that differ from
   the original, S_contr = the act-1 sentences the counterfactual changed;
5. **filter** (:func:`filter_reason`): drop an edit whose counterfactual changed no act-1
   sentence (the proposition was not located: no S_contr), left act 2 **or** act 3 unchanged
   (A2 = A2¬φ or A3 = A3¬φ), has no changed line in acts 2-3, or made more than
   ``max_changed`` changes (changed, inserted or deleted sentences over the whole story); then
   keep it only when the model, shown the **whole patched story** with the modified lines of
   acts 2-3 marked (numbered with ``[modified]``, :func:`marked_story`, or in ``<m></m>`` tags,
   :func:`tagged_story`, the paper's marks), says that those lines introduce a continuity error
   in at least ``judge_min_yes`` of ``judge_samples`` samples (:func:`parse_verdict`: an
   ``Answer: yes/no`` line or the paper's decision sentence).

Every prompt template may use ``{text}`` (the story as plain text), ``{act1}``, ``{act2}``,
``{act3}``, ``{later}`` (acts 2-3 as plain text) and ``{n}`` (its sentences); ``{story}`` is the
plain story too, except in the acts question (numbered lines) and the judge (numbered lines,
the modified ones marked ``[modified]``). Per step: ``{proposition}`` (relevance,
counterfactual), ``{counterfactual}`` (counterfactual: the line's own counterfactual, else
``not (<proposition>)``), ``{facts}`` (reasoned relevance: ``F1. Fact: ...; Counterfactual:
...`` lines), ``{lines}`` (judge: the modified lines' numbers) and ``{tagged}`` (judge: the
plain patched story with each modified sentence in ``<m></m>``).

Every prompt and raw output is recorded (PLOT_HOLE_ATTEMPTS), with the status of each step
(``dropped:<reason>`` for a filtered edit); the first edit of a story that passes the filter is
kept (versions O and F), labelled ``unverified`` until the annotators' verdicts are read back
(:mod:`.review`). A story whose prompts and answers do not fit the model's window, one longer
than ``plot_holes.max_words`` words and (``plot_holes.originals: human``) one that is not
human-written are skipped with the reason.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.lm.sampling import SamplingSettings
from storyflow.measures.plot_holes.acts import act_bounds
from storyflow.measures.plot_holes.ceeval import parse_verdict
from storyflow.measures.plot_holes.controlled import not_edited_types, sentence_lists
from storyflow.measures.plot_holes.maker_answers import (
    Proposition,
    parse_act_lines,
    parse_acts,
    parse_importance,
    parse_proposition,
    parse_propositions,
    parse_rewrite,
)
from storyflow.measures.plot_holes.maker_edits import (
    Patch,
    filter_reason,
    marked_story,
    patch,
    tagged_story,
)
from storyflow.measures.plot_holes.review import review_sheet
from storyflow.measures.plot_holes.versions import version_row
from storyflow.progress import LoggedBar
from storyflow.sentences import count_words, load_spacy
from storyflow.settings import settings_from

log = logging.getLogger(__name__)

MAKER = "model"
#: How the model maker finds a story's three acts: fixed thirds, or asked of the model.
ACT_SPLITS = ("thirds", "model")
#: How relevance is asked: one closed choice per proposition, or (the paper) one reasoned
#: answer scoring every proposition.
RELEVANCE_MODES = ("closed", "reasoned")

#: The relevance scale (1 = no effect on acts 2-3 ... 4 = changes the whole story) and the
#: levels kept (the paper's moderate importance: 2 and 3).
RELEVANCE_SCALE = ("1", "2", "3", "4")
RELEVANT = (2, 3)

#: Tokens of the acts answer ("Act 2: 4, Act 3: 9").
ACTS_TOKENS = 24


def rewrite_tokens(story_tokens: int, minimum: int) -> int:
    """Tokens allowed for the counterfactual rewrite of a story of ``story_tokens`` tokens: the
    story's length plus a quarter and 64 (a rewrite is about as long as the story), at least
    ``minimum`` (``model_maker.max_tokens``)."""
    return max(int(minimum), math.ceil(story_tokens * 1.25) + 64)


@dataclass(frozen=True)
class MakerSettings:
    """Prompts (templates with the fields of the module docstring) and limits of the model
    maker (config ``plot_holes.model_maker``): ``acts``: how the acts are found
    (:data:`ACT_SPLITS`); ``relevance``: how relevance is asked (:data:`RELEVANCE_MODES`);
    ``max_propositions`` and ``attempts``: propositions kept from the list and relevant ones
    tried (None: all); ``max_tokens``: tokens of the proposition list and of a reasoned
    relevance answer (and the least a rewrite may get); ``judge_max_tokens``: tokens of each
    judge sample (its reasoning and verdict); ``seed`` and ``min_sentences``: those of
    ``plot_holes``. Defaults and ranges are the config schema's."""

    prompts: Mapping[str, str]
    acts: str
    relevance: str
    max_propositions: int | None
    attempts: int | None
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


@dataclass(frozen=True)
class MakerJob:
    """A model-maker run on one corpus (rule ``make_model_plot_holes``'s params,
    :func:`storyflow.plan.plot_holes.maker_job`): the ``maker``'s settings
    (:class:`MakerSettings`), ``min_annotators`` (``plot_holes.model_maker``'s: the review
    sheet's rows per story), ``max_words`` (``plot_holes.max_words``: longer stories are
    skipped; None: no limit) and ``story_types`` (the story types that may be edited; None:
    all; :func:`storyflow.plan.plot_holes.edited_story_types`)."""

    maker: MakerSettings
    min_annotators: int
    max_words: int | None
    story_types: tuple[str, ...] | None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> MakerJob:
        """From the rule's params: ``maker`` (``plot_holes.model_maker`` without ``model`` and
        ``verdicts``), ``seed``, ``min_sentences``, ``max_words`` and ``story_types``."""
        block = params["maker"]
        maker = MakerSettings.from_params(
            block, seed=params["seed"], min_sentences=params["min_sentences"]
        )
        return settings_from(
            cls, params, where="plot_holes", maker=maker, min_annotators=block["min_annotators"]
        )


class ModelMaker:
    """Runs the steps with one model (a :class:`storyflow.lm.connect.LanguageModel`)."""

    def __init__(self, model: Any, nlp: Any, settings: MakerSettings) -> None:
        self.model, self.nlp, self.s = model, nlp, settings
        self.mode = model.mode
        #: PLOT_HOLE_ATTEMPTS rows, one per step and attempt
        self.log: list[dict[str, Any]] = []
        #: story_id → the first judge sample that said yes (shown to the annotators)
        self.explanations: dict[str, str] = {}

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

    def _record(
        self, story: str, attempt: int, step: str, status: str, prompt: Any, output: str
    ) -> None:
        text = prompt if isinstance(prompt, str) else prompt.text  # messages for a chat API
        self.log.append(
            tables.PLOT_HOLE_ATTEMPTS.row(
                story_id=story,
                attempt=attempt,
                step=step,
                status=status,
                prompt=text,
                output=output,
            )
        )

    @staticmethod
    def fields(sentences: Sequence[str], bounds: tuple[int, int]) -> dict[str, str]:
        """The fields every step's template may use (module docstring), for acts ``bounds``."""
        a2, a3 = bounds
        text = " ".join(sentences)
        return {
            "text": text,
            "story": text,
            "act1": " ".join(sentences[:a2]),
            "act2": " ".join(sentences[a2:a3]),
            "act3": " ".join(sentences[a3:]),
            "later": " ".join(sentences[a2:]),
            "n": str(len(sentences)),
        }

    def needed_window(self, sentences: Sequence[str]) -> int:
        """Tokens the longest step of one story needs (prompt + answer): the rewrite (story
        prompt + :func:`rewrite_tokens`), the judge (marked story + its answer), the
        proposition list or a reasoned relevance answer (prompt + ``max_tokens``)."""
        fields = self.fields(sentences, act_bounds(len(sentences), self.s.min_sentences) or (1, 2))
        every = range(len(sentences))
        filler = "x " * 48
        rewrite = self._prompt(
            "counterfactual", **fields, proposition=filler, counterfactual=filler
        )
        judge = self._prompt(
            "judge",
            **{**fields, "story": marked_story(sentences, every)},
            tagged=tagged_story(sentences, every),
            lines="1",
        )
        asks = [self._prompt("propositions", **fields)]
        if self.s.relevance == "reasoned":
            facts = "\n".join(f"F{k}. Fact: {filler}; Counterfactual: {filler}" for k in range(8))
            asks.append(self._prompt("relevance_reasoned", **fields, facts=facts))
        story_tokens = self.model.count_text(fields["text"])
        return max(
            self.model.count(rewrite) + rewrite_tokens(story_tokens, self.s.max_tokens),
            self.model.count(judge) + self.s.judge_max_tokens,
            *(self.model.count(ask) + self.s.max_tokens for ask in asks),
        )

    def _relevance(self, story_id: str, prop: Proposition, fields: Mapping[str, str]) -> int:
        """One proposition's relevance as a closed choice among 1-4 (``relevance: closed``)."""
        prompt = self._prompt("relevance", **fields, proposition=prop.fact)
        options = RELEVANCE_SCALE if self.mode == "chat" else [" " + o for o in RELEVANCE_SCALE]
        choice = self.model.answer(prompt, options)
        score = int(choice.best.strip())
        self._record(
            story_id,
            0,
            "relevance",
            "ok",
            prompt,
            json.dumps({"proposition": prop.fact, "score": score, "probs": choice.probs}),
        )
        return score

    def _reasoned_relevance(
        self, story_id: str, props: Sequence[Proposition], fields: Mapping[str, str]
    ) -> list[int | None]:
        """Every proposition's relevance from one reasoned answer (``relevance: reasoned``, the
        paper's fact scorer): the model reasons about each fact, then scores it
        (:func:`parse_importance`); None for a fact whose score cannot be read."""
        facts = "\n".join(
            f"F{k}. Fact: {p.fact}; Counterfactual: {p.negated}"
            for k, p in enumerate(props, start=1)
        )
        prompt = self._prompt("relevance_reasoned", **fields, facts=facts)
        text = self._generate(prompt)[0]
        found = parse_importance(text, len(props))
        scores = [found.get(k) for k in range(1, len(props) + 1)]
        status = "ok" if all(v is not None for v in scores) else "unparseable"
        if found and status != "ok":
            status = f"partial:{len(found)}/{len(props)}"
        self._record(
            story_id,
            0,
            "relevance",
            status,
            prompt,
            json.dumps({"answer": text, "scores": scores, "facts": [p.fact for p in props]}),
        )
        return scores

    def _acts(
        self, story_id: str, sentences: Sequence[str], thirds: tuple[int, int]
    ) -> tuple[int, int]:
        """The acts' bounds the model names (:func:`parse_act_lines`, :func:`parse_acts`), else
        ``thirds`` (recorded)."""
        fields = self.fields(sentences, thirds)
        prompt = self._prompt("acts", **{**fields, "story": marked_story(sentences, ())})
        text = self._generate(prompt, max_tokens=self.acts_tokens(sentences))[0]
        if re.search(r"first\s+line", text or "", re.I):
            bounds = parse_act_lines(text, sentences)
        else:
            bounds = parse_acts(text, len(sentences))
        status = "ok" if bounds is not None else "unparseable:thirds"
        self._record(story_id, 0, "acts", status, prompt, text)
        return bounds if bounds is not None else thirds

    def acts_tokens(self, sentences: Sequence[str]) -> int:
        """Tokens of the acts answer: :data:`ACTS_TOKENS` for line numbers; with a prompt that
        asks for the acts' first lines (the paper's), room for three quoted sentences."""
        if "first line" not in self.s.prompts["acts"].lower():
            return ACTS_TOKENS
        longest = max((self.model.count_text(s) for s in sentences), default=0)
        return ACTS_TOKENS + 3 * (longest + 16)

    def _propositions(self, story_id: str, fields: Mapping[str, str]) -> list[Proposition]:
        """Step 1: what act 1 establishes, as listed by the model (at most
        ``max_propositions``; an echoed template line is dropped); recorded."""
        prompt = self._prompt("propositions", **fields)
        text = self._generate(prompt)[0]
        props = [parse_proposition(p) for p in parse_propositions(text, self.s.max_propositions)]
        # an echoed template line ("...", "<Fact1>") is not a proposition
        props = [p for p in props if re.search(r"[^\W\d_]", p.fact) and not p.fact.startswith("<")]
        self._record(story_id, 0, "propositions", "ok" if props else "unparseable", prompt, text)
        return props

    def _relevant(
        self, story_id: str, props: Sequence[Proposition], fields: Mapping[str, str]
    ) -> list[Proposition]:
        """Step 2: the propositions whose relevance to acts 2-3 is in :data:`RELEVANT` (2 or 3
        of 1-4), asked as ``relevance`` says."""
        if self.s.relevance == "reasoned":
            scores = self._reasoned_relevance(story_id, props, fields)
        else:
            scores = [self._relevance(story_id, p, fields) for p in props]
        return [p for p, score in zip(props, scores, strict=True) if score in RELEVANT]

    def _counterfactual(
        self,
        story_id: str,
        attempt: int,
        prop: Proposition,
        fields: Mapping[str, str],
        budget: int,
    ) -> list[str]:
        """Step 3: the story rewritten with ``prop`` negated (at most ``budget`` tokens), split
        into sentences (empty: unparseable); recorded."""
        prompt = self._prompt(
            "counterfactual", **fields, proposition=prop.fact, counterfactual=prop.negated
        )
        text = self._generate(prompt, temperature=self.s.temperature, max_tokens=budget)[0]
        story = parse_rewrite(text)
        rewritten = [s.text.strip() for s in self.nlp(story).sents if s.text.strip()]
        status = "ok" if rewritten else "unparseable"
        self._record(story_id, attempt, "counterfactual", status, prompt, text)
        return rewritten

    def _filter(self, story_id: str, attempt: int, edit: Patch) -> str | None:
        """Step 5's rules (:func:`filter_reason`): why ``edit`` is dropped, or None; recorded
        with the edit's lines and number of changes."""
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
        return reason

    def _judge(
        self, story_id: str, attempt: int, edit: Patch, bounds: tuple[int, int]
    ) -> str | None:
        """Step 5's judge: None when at least ``judge_min_yes`` of ``judge_samples`` samples
        say the marked lines introduce a continuity error (the first yes is kept as the
        story's explanation), else the reason (``judge <yes>/<samples> yes``); recorded."""
        prompt = self._prompt(
            "judge",
            **{
                **self.fields(edit.sentences, bounds),
                "story": marked_story(edit.sentences, edit.error),
            },
            tagged=tagged_story(edit.sentences, edit.error),
            lines=", ".join(str(i + 1) for i in edit.error),
        )
        texts = self._generate(
            prompt,
            k=self.s.judge_samples,
            temperature=self.s.temperature,
            max_tokens=self.s.judge_max_tokens,
        )
        votes = [parse_verdict(t) for t in texts]
        yes = sum(v == "yes" for v in votes)
        ok = yes >= self.s.judge_min_yes
        self._record(
            story_id,
            attempt,
            "judge",
            "ok" if ok else f"dropped:judge {yes}/{len(votes)}",
            prompt,
            json.dumps({"votes": votes, "answers": texts}),
        )
        if not ok:
            return f"judge {yes}/{len(votes)} yes"
        self.explanations[story_id] = next(
            t for t, v in zip(texts, votes, strict=True) if v == "yes"
        ).strip()
        return None

    def _attempt(
        self,
        story_id: str,
        attempt: int,
        prop: Proposition,
        sentences: Sequence[str],
        bounds: tuple[int, int],
        budget: int,
    ) -> Patch | str:
        """Steps 3-5 for one relevant proposition: the patched story that passes the filter
        and the judge, or why it was dropped. ``budget``: tokens of the rewrite."""
        fields = self.fields(sentences, bounds)
        rewritten = self._counterfactual(story_id, attempt, prop, fields, budget)
        if not rewritten:
            return "counterfactual unparseable"
        edit = patch(sentences, rewritten, bounds)
        reason = self._filter(story_id, attempt, edit) or self._judge(
            story_id, attempt, edit, bounds
        )
        return reason if reason else edit

    def make(
        self, story_id: str, sentences: Sequence[str], window: int | None = None
    ) -> tuple[Patch, Proposition] | str:
        """The kept edit and its proposition, or the reason the story has none. ``window``:
        the tokens a story's steps may take (None: no limit)."""
        bounds = act_bounds(len(sentences), self.s.min_sentences)
        if bounds is None:
            return f"too short for three acts ({len(sentences)} sentences)"
        if window is not None and (need := self.needed_window(sentences)) > window:
            return f"too long for the model's window ({need} tokens needed, {window} available)"
        if self.s.acts == "model":
            bounds = self._acts(story_id, sentences, bounds)
        fields = self.fields(sentences, bounds)
        props = self._propositions(story_id, fields)
        if not props:
            return "propositions: no proposition could be parsed"
        relevant = self._relevant(story_id, props, fields)
        if not relevant:
            return "relevance: no proposition scored 2 or 3 (of 1-4)"
        budget = rewrite_tokens(self.model.count_text(fields["text"]), self.s.max_tokens)
        reasons = []
        for attempt, prop in enumerate(relevant[: self.s.attempts], start=1):
            edit = self._attempt(story_id, attempt, prop, sentences, bounds, budget)
            if not isinstance(edit, str):
                return edit, prop
            reasons.append(edit)
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


def _left_out(
    by_story: Mapping[str, Sequence[str]],
    stories: pd.DataFrame,
    *,
    max_words: int | None,
    story_types: Sequence[str] | None,
) -> dict[str, str]:
    """story_id → why the model maker skips it before any model call: a ``story_type`` not
    edited (:func:`.controlled.not_edited_types`), or more than ``max_words`` whitespace words
    (None: no limit)."""
    left_out = not_edited_types(stories, story_types)
    for story_id, sents in by_story.items():
        words = count_words(*sents)
        if story_id not in left_out and max_words is not None and words > max_words:
            left_out[story_id] = f"longer than plot_holes.max_words ({words} > {max_words} words)"
    return left_out


def _open_window(maker: ModelMaker, by_story: Mapping[str, Sequence[str]]) -> int | None:
    """The tokens a story's steps may take: a local model's window, sized to the stories
    ``by_story`` (:func:`maker_window`) and set on the model before its weights load; for a
    served model its trained context (None when unknown)."""
    window = maker_window(maker, by_story)
    if window is None:
        return maker.model.training_window()
    maker.model.n_ctx = window
    log.info("model maker: window %d tokens (the longest story that fits)", window)
    return window


def _provenance(maker: ModelMaker, model: str, story_id: str, prop: Proposition) -> str:
    """The provenance (JSON) of a kept edit: the maker, its ``model`` and seed, the proposition
    negated and the judge's explanation (the first sample that said yes)."""
    return json.dumps(
        {
            "maker": MAKER,
            "model": model,
            "seed": maker.s.seed,
            "counterfactual_of": prop.fact,
            "judge_explanation": maker.explanations.get(story_id, ""),
        },
        sort_keys=True,
    )


def _rows(
    story_id: str,
    sents: Sequence[str],
    edit: Patch,
    prop: Proposition,
    original: str,
    provenance: str,
) -> list[dict[str, Any]]:
    """The PLOT_HOLE_STORIES rows (versions O and F) of one kept edit; ``provenance``: JSON."""
    rows = []
    target = edit.error[0]
    for version, sents_v, flawed in (("O", sents, False), ("F", edit.sentences, True)):
        rows.append(
            version_row(
                story_id,
                MAKER,
                version,
                sents_v,
                error_lines=[i + 1 for i in edit.error] if flawed else [],
                contr_lines=[i + 1 for i in edit.contradicted] if flawed else [],
                target_idx=target,
                attribute_class="proposition",
                proposition=prop.negated,
                original=original,
                verification="unverified",
                provenance=provenance,
            )
        )
    return rows


def make_with_model(
    maker: ModelMaker,
    sentences: pd.DataFrame,
    stories: pd.DataFrame,
    model: str,
    *,
    max_words: int | None,
    story_types: Sequence[str] | None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(PLOT_HOLE_STORIES, PLOT_HOLE_SKIPPED, PLOT_HOLE_ATTEMPTS) of the model maker.

    Stories longer than ``max_words`` whitespace words (``plot_holes.max_words``; None: no
    limit) and, when ``story_types`` is given (``plot_holes.originals: human``), stories of
    another ``story_type`` are skipped with the reason before any model call, as by the
    controlled maker. A local model's window is then sized to the remaining stories
    (:func:`maker_window`: before its weights load); a story that does not fit it (or a served
    model's trained context, when known) is skipped with the tokens it needs."""
    by_story = sentence_lists(sentences)
    left_out = _left_out(by_story, stories, max_words=max_words, story_types=story_types)
    window = _open_window(maker, {sid: s for sid, s in by_story.items() if sid not in left_out})
    made, skipped = [], []
    texts = dict(zip(stories["story_id"].astype(str), stories["text"], strict=True))
    for story_id in LoggedBar(
        list(texts), desc=f"model maker ({model})", unit="story", file=sys.stderr
    ):
        sents = by_story.get(story_id, [])
        result = left_out.get(story_id) or maker.make(story_id, sents, window)
        if isinstance(result, str):
            skipped.append(
                tables.PLOT_HOLE_SKIPPED.row(story_id=story_id, maker=MAKER, reason=result)
            )
            continue
        edit, prop = result
        provenance = _provenance(maker, model, story_id, prop)
        made.extend(_rows(story_id, sents, edit, prop, texts[story_id], provenance))
    counts = (
        pd.Series([r["status"] for r in maker.log]).value_counts().to_dict() if maker.log else {}
    )
    reasons = pd.Series([r["reason"].split(" (")[0] for r in skipped]).value_counts().to_dict()
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
    job: MakerJob,
    spacy_model: str,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The model maker on a corpus (rule ``make_model_plot_holes``).

    Args:
        model: The maker's model (a :class:`storyflow.lm.connect.LanguageModel`); a local
            model's window is sized to the stories before its weights load
            (:func:`maker_window`).
        sentences: The corpus's sentences (:data:`tables.SENTENCES`).
        stories: Its stories (``story_id``, ``text``; ``story_type`` when
            ``job.story_types`` is given).
        job: The maker's settings, the review sheet's rows per story and the stories it may
            edit.
        spacy_model: The spaCy pipeline that splits the rewrites into sentences.

    Returns:
        ``(made, skipped, attempts, sheet)``: :func:`make_with_model`'s three tables and the
        review sheet of the flawed versions (:func:`.review.review_sheet`).
    """
    maker = ModelMaker(model, load_spacy(spacy_model), job.maker)
    made, skipped, attempts = make_with_model(
        maker, sentences, stories, model.name, max_words=job.max_words, story_types=job.story_types
    )
    return made, skipped, attempts, review_sheet(made, job.min_annotators)
