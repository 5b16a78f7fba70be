"""The entailment (NLI) baseline: a configured model used as a contradiction classifier over
sentence pairs.

For each story version shown, every pair (an earlier sentence i of act 1, a later sentence j of
acts 2-3; :mod:`storyflow.measures.plot_holes.acts`) is put to the model as a closed-choice
question (``plot_holes.nli.prompt`` with ``{premise}`` = sentence i, ``{hypothesis}`` = sentence
j): does the second sentence contradict the first? The answer is read as P(yes), renormalised
over yes/no (docs/lm.md), in [0, 1]. The story's p_error is the largest P(yes) over its pairs;
the detector says "error" when it exceeds ``threshold`` and then localizes the error at that
pair: S_error = {j}, S_contr = {i} (1-based). Pairs are restricted to act 1 × acts 2-3 because
that is where both makers put the establishing mention and the contradiction; a story with
fewer than ``min_sentences`` sentences has no acts and gets p_error NaN (logged).

This is the pairwise NLI baseline of the issue with a language model in place of a trained NLI
classifier (none ships with the project). Its cost is one short prompt per pair: about
|act 1| × |acts 2-3| ≈ 2n²/9 prompts for an n-sentence story; the pair answers are cached by
sentence text, so the O and F versions of a story share all but the changed sentence's pairs.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from tqdm import tqdm

from storyflow import tables
from storyflow.lm.connect import LanguageModel
from storyflow.measures.plot_holes.acts import act_bounds
from storyflow.measures.plot_holes.ceeval import ceeval_full
from storyflow.measures.plot_holes.detect import question_prompt, yes_no

log = logging.getLogger(__name__)

PREFIX = "nli:"


@dataclass(frozen=True)
class NliSettings:
    """``prompt``: the pair question (``{premise}``, ``{hypothesis}``); ``threshold``: the
    largest pair P(yes) above which the story is flagged; ``min_sentences``: fewer sentences
    have no acts; ``n_ctx``: the model's window."""

    prompt: str
    threshold: float = 0.5
    min_sentences: int = 6
    n_ctx: int = 512

    @classmethod
    def from_config(cls, block: Mapping[str, Any]) -> NliSettings:
        nli = block["nli"]
        return cls(
            prompt=nli["prompt"],
            threshold=float(nli["threshold"]),
            min_sentences=int(block["min_sentences"]),
            n_ctx=int(nli["n_ctx"]),
        )


def sentence_pairs(n_sentences: int, min_sentences: int) -> list[tuple[int, int]]:
    """(i, j), 0-based: i in act 1, j in acts 2-3; empty when the story has no three acts."""
    bounds = act_bounds(n_sentences, min_sentences)
    if bounds is None:
        return []
    first_later = bounds[0]
    return [(i, j) for i in range(first_later) for j in range(first_later, n_sentences)]


def nli_answers(model: LanguageModel, items: pd.DataFrame, settings: NliSettings) -> pd.DataFrame:
    """PLOT_HOLE_ANSWERS rows of detector ``nli:<model>`` for every story version of
    ``items`` (PLOT_HOLE_STORIES rows); ``n_prompt_tokens`` counts the prompt tokens of the
    pairs the version needed (cached pairs included)."""
    options = yes_no(model)
    cache: dict[tuple[str, str], tuple[float, int]] = {}
    rows, no_acts = [], []
    for item in tqdm(
        items.itertuples(index=False),
        total=len(items),
        desc=f"nli ({model.name})",
        unit="story",
        file=sys.stderr,
        mininterval=5.0,
    ):
        sents = list(item.sentences)
        best, best_pair, n_tokens = math.nan, None, 0
        for i, j in sentence_pairs(len(sents), settings.min_sentences):
            key = (sents[i], sents[j])
            if key not in cache:
                question = settings.prompt.format(premise=key[0], hypothesis=key[1])
                prompt = question_prompt(model, question)
                size = model.count(prompt)
                too_long = model.window is not None and size + 8 > model.window
                p_yes = math.nan if too_long else model.answer(prompt, options).probs[0]
                cache[key] = (p_yes, size)
            p_yes, size = cache[key]
            n_tokens += size
            if not math.isnan(p_yes) and (math.isnan(best) or p_yes > best):
                best, best_pair = p_yes, (i + 1, j + 1)
        if best_pair is None:
            no_acts.append(item.item_id)
        says = bool(best > settings.threshold)
        pe, pc = ([best_pair[1]], [best_pair[0]]) if says and best_pair else ([], [])
        rows.append(
            (
                item.item_id,
                item.story_id,
                item.maker,
                item.version,
                PREFIX + model.name,
                bool(item.has_error),
                best,
                says,
                f"error: {pe[0]}; contradicts: {pc[0]}" if pe else "",
                "ok" if says else "not_asked",
                pe,
                pc,
                ceeval_full(item.has_error, says, item.error_lines, item.contr_lines, pe, pc),
                n_tokens,
            )
        )
    if no_acts:
        log.warning(
            "%d story version(s) have fewer than %d sentences (no acts, no pairs) or only pairs "
            "longer than n_ctx: p_error NaN (says no): %s",
            len(no_acts),
            settings.min_sentences,
            ", ".join(no_acts),
        )
    log.info("%d sentence pairs asked, %d story versions", len(cache), len(rows))
    return tables.PLOT_HOLE_ANSWERS.frame(rows)
