"""The entailment (NLI) baseline: a configured model used as a contradiction classifier over
sentence pairs.

For each story version shown, sentence pairs (premise i, hypothesis j; :func:`sentence_pairs`)
are put to the model as a closed-choice question (``plot_holes.nli.prompt`` with ``{premise}``
= sentence i, ``{hypothesis}`` = sentence j): does the second sentence contradict the first? The
answer is read as P(yes), renormalised over yes/no (docs/lm.md), in [0, 1]. The story's p_error
is the largest P(yes) over its pairs; the detector says "error" when it exceeds ``threshold``
and then localizes the error at that pair: S_error = {the later sentence of the two},
S_contr = {the earlier one} (1-based).

Which pairs (``plot_holes.nli.pairs``):

* ``all`` (the paper's baseline): every ordered pair of distinct sentences, both orders:
  n(n − 1) prompts for an n-sentence story (a 30-sentence story: 870);
* ``act1_later`` (the default, cheaper): i in act 1, j in acts 2-3
  (:mod:`storyflow.measures.plot_holes.acts`), where both makers put the establishing mention
  and the contradiction: about 2n²/9 prompts; a story with fewer than ``min_sentences``
  sentences has no acts and gets p_error NaN (logged).

This is the pairwise NLI baseline with a language model in place of a trained NLI classifier
(none ships with the project). The pair answers are cached by sentence text, so the O and F
versions of a story share all but the changed sentence's pairs. A local model's window is sized
to the longest pair prompt (``n_ctx`` null) or fixed (``n_ctx``); a pair that does not fit is
not asked, and a version with such a pair is left out (``answer_status`` ``too_long``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.lm.connect import LanguageModel
from storyflow.lm.prompts import Prompt
from storyflow.measures.plot_holes.acts import act_bounds
from storyflow.measures.plot_holes.ceeval import ceeval_full
from storyflow.measures.plot_holes.detect import (
    TOO_LONG,
    answer_row,
    fit_window,
    question_prompt,
    yes_no,
)
from storyflow.measures.plot_holes.versions import each_version
from storyflow.settings import settings_from

log = logging.getLogger(__name__)

PREFIX = "nli:"


#: The pair sets of ``plot_holes.nli.pairs`` (module docstring).
PAIR_SETS = ("act1_later", "all")


@dataclass(frozen=True)
class NliSettings:
    """``prompt``: the pair question (``{premise}``, ``{hypothesis}``); ``threshold``: the
    largest pair P(yes) above which the story is flagged; ``min_sentences``: fewer sentences
    have no acts; ``n_ctx``: the model's window in tokens (None: sized to the longest pair
    prompt, up to the model's trained context); ``pairs``: which pairs (:data:`PAIR_SETS`).
    Defaults and ranges are the config schema's (``plot_holes.nli``, ``plot_holes.min_sentences``).
    """

    prompt: str
    threshold: float
    min_sentences: int
    n_ctx: int | None
    pairs: str

    @classmethod
    def from_config(cls, block: Mapping[str, Any]) -> NliSettings:
        """From the params of the NLI rules: the validated ``nli`` block and ``min_sentences``
        of ``plot_holes``."""
        return settings_from(
            cls, block["nli"], where="plot_holes.nli", min_sentences=block["min_sentences"]
        )


def sentence_pairs(n_sentences: int, min_sentences: int, pairs: str) -> list[tuple[int, int]]:
    """(premise, hypothesis), 0-based. ``all``: every ordered pair of distinct sentences;
    ``act1_later``: premise in act 1, hypothesis in acts 2-3 (empty without three acts)."""
    if pairs == "all":
        return [(i, j) for i in range(n_sentences) for j in range(n_sentences) if i != j]
    bounds = act_bounds(n_sentences, min_sentences)
    if bounds is None:
        return []
    first_later = bounds[0]
    return [(i, j) for i in range(first_later) for j in range(first_later, n_sentences)]


#: A sentence pair by its texts: (premise, hypothesis).
PairKey = tuple[str, str]


def _pair_prompts(
    model: LanguageModel,
    items: pd.DataFrame,
    pair_sets: Mapping[str, Sequence[tuple[int, int]]],
    template: str,
) -> dict[PairKey, tuple[Prompt, int]]:
    """(premise, hypothesis) text → the pair's prompt (``template`` with ``{premise}`` and
    ``{hypothesis}``) and its length in tokens, for every pair of ``pair_sets`` (item_id →
    0-based pairs) of the ``items``; a pair whose texts recur is built once."""
    prompts: dict[PairKey, tuple[Prompt, int]] = {}
    for item in items.itertuples(index=False):
        sents = list(item.sentences)
        for i, j in pair_sets[item.item_id]:
            key = (sents[i], sents[j])
            if key not in prompts:
                question = template.format(premise=key[0], hypothesis=key[1])
                prompt = question_prompt(model, question)
                prompts[key] = (prompt, model.count(prompt))
    return prompts


def _best_pair(
    model: LanguageModel,
    options: Mapping[str, Sequence[str]],
    keys: Sequence[tuple[PairKey, tuple[int, int]]],
    prompts: Mapping[PairKey, tuple[Prompt, int]],
    cache: dict[PairKey, float],
) -> tuple[float, tuple[int, int] | None, int]:
    """The largest P(yes) (0..1; NaN without pairs) over one version's pairs ``keys`` (text
    key, 0-based position), the pair that has it (1-based; None without pairs) and the prompt
    tokens of all its pairs. Each pair text is asked once: ``cache`` keeps the answers."""
    best, best_pair, n_tokens = math.nan, None, 0
    for key, (i, j) in keys:
        if key not in cache:
            cache[key] = model.answer(prompts[key][0], options).probs[0]
        n_tokens += prompts[key][1]
        if math.isnan(best) or cache[key] > best:
            best, best_pair = cache[key], (i + 1, j + 1)
    return best, best_pair, n_tokens


def _warn_left_out(
    no_pairs: Sequence[str], too_long: Sequence[str], min_sentences: int, limit: int | None
) -> None:
    """Log the versions with no pair (fewer than ``min_sentences`` sentences) and those with
    a pair prompt longer than the window (``limit`` tokens)."""
    if no_pairs:
        log.warning(
            "%d story version(s) have fewer than %d sentences (no acts, no pairs): p_error NaN "
            "(says no): %s",
            len(no_pairs),
            min_sentences,
            ", ".join(no_pairs),
        )
    if too_long:
        log.warning(
            "%d story version(s) have a pair prompt longer than the window (%s tokens): left out "
            "(answer_status too_long): %s",
            len(too_long),
            limit,
            ", ".join(too_long),
        )


def nli_answers(model: LanguageModel, items: pd.DataFrame, settings: NliSettings) -> pd.DataFrame:
    """PLOT_HOLE_ANSWERS rows of detector ``nli:<model>`` for every story version of
    ``items`` (PLOT_HOLE_STORIES rows); ``n_prompt_tokens`` counts the prompt tokens of the
    pairs the version needed (cached pairs included)."""
    options = yes_no(model)
    pair_sets = {
        item.item_id: sentence_pairs(len(item.sentences), settings.min_sentences, settings.pairs)
        for item in items.itertuples(index=False)
    }
    prompts = _pair_prompts(model, items, pair_sets, settings.prompt)
    limit = fit_window(model, [size + 8 for _, size in prompts.values()], settings.n_ctx)
    cache: dict[tuple[str, str], float] = {}
    rows, no_pairs, too_long = [], [], []
    for item in each_version(items, f"nli ({model.name})"):
        sents = list(item.sentences)
        keys = [((sents[i], sents[j]), (i, j)) for i, j in pair_sets[item.item_id]]
        fits = limit is None or all(prompts[k][1] + 8 <= limit for k, _ in keys)
        best, best_pair, n_tokens = _best_pair(model, options, keys if fits else [], prompts, cache)
        if not fits:
            too_long.append(item.item_id)
        elif best_pair is None:
            no_pairs.append(item.item_id)
        says = bool(best > settings.threshold)
        pe, pc = ([max(best_pair)], [min(best_pair)]) if says and best_pair else ([], [])
        status = "ok" if says else ("not_asked" if fits else TOO_LONG)
        rows.append(
            answer_row(
                item,
                PREFIX + model.name,
                p_error=best,
                says_error=says,
                answer=f"error: {pe[0]}; contradicts: {pc[0]}" if pe else "",
                answer_status=status,
                pred_error=pe,
                pred_contr=pc,
                ceeval=ceeval_full(
                    item.has_error, says, item.error_lines, item.contr_lines, pe, pc
                ),
                n_prompt_tokens=n_tokens,
            )
        )
    _warn_left_out(no_pairs, too_long, settings.min_sentences, limit)
    log.info(
        "%d sentence pairs (%s) asked, %d story versions, window %s tokens",
        len(cache),
        settings.pairs,
        len(rows),
        model.window,
    )
    return tables.PLOT_HOLE_ANSWERS.frame(rows)
