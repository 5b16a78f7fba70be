"""Two diagnostic variants of the NLL terms, used to attribute the context-only result
(docs/replication.md, "Attribution of the two disagreements"); neither is the paper's measure.

storyflow tokenizes every sentence with a leading space (``storyflow.lm.nll.planning``), so the
unconditional term of the context-only formulation (h = 0) scores "[start] ␣s_i": the target's
first token follows the start token (or the chat template's prefix), while at h >= 1 it follows
the previous sentence's full stop. A cost paid once per sentence on that first token enters a
term divided by the sentence's length, and so weighs more on short sentences. The variants
remove it in two ways:

- :func:`without_first_token`: every term (every h, both formulations) averaged over the
  target's tokens after the first, from the NLL table's ``nll`` and ``nll_first`` (no new
  scoring);
- :func:`score_unconditional` and :func:`with_unconditional`: the h = 0 terms of the
  context-only formulation scored again with the target tokenized without its leading space
  ("[start] s_i"), the other terms as they were.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.lm.backends import score_requests
from storyflow.lm.backends.llama_cpp import LlamaCppScorer, VocabOnly
from storyflow.lm.nll.planning import tokenize_story
from storyflow.lm.prompts import ChatPrompt

log = logging.getLogger(__name__)

#: The formulation and history label of the unconditional term the variants rescore.
CONTEXT, BASE_HISTORY = "context", "0"


def without_first_token(nll: pd.DataFrame) -> pd.DataFrame:
    """``nll`` (:data:`storyflow.tables.NLL`) with each term's ``nll`` the mean −ln p of the
    target's tokens after the first (nats/token): (nll × n_tokens − nll_first) / (n_tokens − 1).
    A one-token target has no such token: its terms become NaN, and the sentence drops out of
    the story means (the story's sentence count is kept)."""
    tables.NLL.check(nll, needs=["nll", "nll_first", "n_tokens"])
    n = nll["n_tokens"].astype(float)
    rest = (nll["nll"] * n - nll["nll_first"]) / (n - 1)
    return nll.assign(nll=rest.where(n > 1), nll_first=np.nan)


def score_unconditional(
    model_name: str,
    model_path: str | Path,
    sentences: pd.DataFrame,
    *,
    prompt: str,
    spaced: bool,
    n_threads: int = 2,
) -> pd.DataFrame:
    """The context-only formulation's unconditional terms (h = 0) of every sentence, scored one
    pass each: the prefix of the workflow's terms (the start token, or the chat template's
    context prefix with ``prompt`` chat) followed by the sentence tokenized with a leading space
    (``spaced``: the workflow's term) or without it. Rows of :data:`storyflow.tables.NLL`
    (``formulation`` context, ``history`` "0")."""
    vocab = VocabOnly(model_path)
    start = vocab.start_token
    chat = ChatPrompt(vocab.llm, model_name) if prompt == "chat" else None
    requests, keys = [], []
    for story_id, group in sentences.sort_values(["story_id", "sentence_idx"]).groupby(
        "story_id", sort=True
    ):
        texts = list(group["text"])
        story = tokenize_story(vocab, str(story_id), texts, None, chat)
        prefix = story.prefix(CONTEXT, start)
        for idx, (text, spaced_ids) in enumerate(zip(texts, story.sentences, strict=True)):
            target = spaced_ids if spaced else vocab.tokenize(text)
            requests.append((prefix, target))
            keys.append((str(story_id), idx))
    n_ctx = max(len(p) + len(t) for p, t in requests) + 8
    scorer = LlamaCppScorer(model_path, n_ctx=n_ctx, n_threads=n_threads)
    log.info(
        "model %s: %d unconditional terms, %s leading space, %d tokens",
        model_name, len(requests), "with" if spaced else "without",
        sum(len(t) for _, t in requests),
    )  # fmt: skip
    rows = []
    for (story_id, idx), (_, target), logprobs in zip(
        keys, requests, score_requests(scorer, requests), strict=True
    ):
        rows.append(
            tables.NLL.row(
                story_id=story_id, sentence_idx=idx, model=model_name, formulation=CONTEXT,
                history=BASE_HISTORY, n_history=0, n_tokens=len(target),
                nll=-float(np.mean(logprobs)), nll_first=-float(logprobs[0]), truncated=False,
            )
        )  # fmt: skip
    return tables.NLL.frame(rows)


def with_unconditional(nll: pd.DataFrame, unconditional: pd.DataFrame) -> pd.DataFrame:
    """``nll`` with every context-only term that sees no sentence (``n_history`` 0: the h = 0
    term, and a story's first sentence at every h) taken from ``unconditional`` (the same
    sentences, from :func:`score_unconditional`); every other term unchanged."""
    key = ["story_id", "sentence_idx", "model", "formulation"]
    values = ["n_tokens", "nll", "nll_first"]
    new = unconditional.drop_duplicates(key).set_index(key)[values]
    out = nll.copy()
    alone = (out["formulation"] == CONTEXT) & (out["n_history"] == 0)
    rows = pd.MultiIndex.from_frame(out.loc[alone, key])
    missing = rows.difference(new.index)
    if len(missing):
        raise ValueError(f"{len(missing)} terms without history have no rescored counterpart")
    out.loc[alone, values] = new.loc[rows, values].to_numpy()
    return out.astype(nll.dtypes.to_dict())
