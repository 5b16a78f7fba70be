"""The cheap companion of the sampled no-rate: how much the prefix tells about the remainder.

At each cut, with the remainder's tokens r (sentences i+1..N, each tokenized on its own with a
leading space, as in :mod:`~storyflow.measures.tension.cuts`):

    nll_alone   = −(1/|r|) Σ_t ln p(r_t | start, r_<t)              nats/token
    nll_context = −(1/|r|) Σ_t ln p(r_t | start, prefix, r_<t)      nats/token
    pmi         = nll_alone − nll_context                           nats/token

``start`` is the model's start token (``storyflow.lm.backends``); no prompt or chat template is
used: the story is scored as plain text. A high PMI means the story so far makes its actual
remainder predictable (low tension); the story value is the mean over its cuts. One pass over
the whole story gives ``nll_context`` at every cut; each cut adds one pass over its remainder.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.lm.backends import Scorer
from storyflow.lm.connect import LanguageModel
from storyflow.progress import LoggedBar

log = logging.getLogger(__name__)


def pmi_window(cuts: pd.DataFrame) -> int:
    """The context window (tokens) of the PMI pass: the longest story (``story_tokens`` of the
    cuts, counted with the model's tokenizer by :mod:`~storyflow.measures.tension.cuts`) plus 8
    (the start token and slack); 64 when there is no cut."""
    return int(cuts["story_tokens"].max()) + 8 if len(cuts) else 64


def score_pmi(model: LanguageModel, cuts: pd.DataFrame, sentences: pd.DataFrame) -> pd.DataFrame:
    """PMI of the remainder with the prefix at every cut (:data:`tables.TENSION_PMI`), scored
    by ``model`` (a local :class:`~storyflow.lm.connect.LanguageModel`): its window is sized to
    the longest story (:func:`pmi_window`) before its weights load, then :func:`cut_pmi`."""
    model.n_ctx = pmi_window(cuts)
    return cut_pmi(model.scorer(), cuts, sentences, model.name)


def cut_pmi(
    scorer: Scorer, cuts: pd.DataFrame, sentences: pd.DataFrame, model: str
) -> pd.DataFrame:
    """PMI of the remainder with the prefix at every cut (:data:`tables.TENSION_PMI`)."""
    by_story = {
        sid: grp.sort_values("sentence_idx")["text"].astype(str).tolist()
        for sid, grp in sentences.groupby("story_id", sort=False)
    }
    start = [scorer.start_token]
    rows = []
    for story_id, story_cuts in LoggedBar(cuts.groupby("story_id", sort=False), desc="stories"):
        sents = by_story[story_id]
        ids = [scorer.tokenize(s if i == 0 else " " + s) for i, s in enumerate(sents)]
        whole = [t for sentence in ids for t in sentence]
        logprobs = scorer.logprobs(start, whole)
        ends = np.cumsum([len(s) for s in ids])
        for cut in story_cuts.itertuples(index=False):
            offset = int(ends[cut.sentence_idx])
            remainder = whole[offset:]
            nll_context = float(-logprobs[offset:].mean())
            nll_alone = float(-scorer.logprobs(start, remainder).mean())
            rows.append(
                tables.TENSION_PMI.row(
                    story_id=story_id,
                    story_type=cut.story_type,
                    model=model,
                    cut=cut.cut,
                    sentence_idx=cut.sentence_idx,
                    pct=cut.pct,
                    n_tokens=len(remainder),
                    nll_alone=nll_alone,
                    nll_context=nll_context,
                    pmi=nll_alone - nll_context,
                )
            )
    return tables.TENSION_PMI.frame(rows)
