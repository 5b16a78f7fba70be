"""Where a story is cut: after sentence i of the spaCy split, the prefix is s1..si and the truth
is the whole remainder s(i+1)..sN.

Positions follow Sui et al.: position i (1-based) is the prefix s1..si; in the tables
``sentence_idx`` is the 0-based index of si (i − 1). ``pct(i)`` = prefix tokens / story
tokens, counted with the forecaster's tokenizer (each sentence tokenized on its own, with a
leading space after the first, as the NLL engine does; words for a served model without a
tokenizer file, recorded in the ``unit`` column). Position i is kept when ``min_pct <= pct <=
max_pct`` and the sentence *preceding* si, s(i−1), has at least ``min_words`` words
(whitespace-separated): the paper's minimum-context rule, so position 1 (no preceding sentence)
is kept only with ``min_words`` 0. Stories over ``max_story_words`` words, with fewer than two
sentences or with no kept cut are excluded (listed with the reason). With ``max_cuts`` set, a
story keeps at most that many of its cuts, evenly spaced over its kept cuts (first and last
included).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.sentences import count_words
from storyflow.settings import settings_from

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CutSettings:
    """Which cuts are kept (see the module docstring); ``max_cuts`` None = all kept cuts.

    The config's ``tension.cuts`` (defaults and ranges in the config schema); built with
    :meth:`from_config`."""

    min_pct: float
    max_pct: float
    min_words: int
    max_story_words: int
    max_cuts: int | None

    def __post_init__(self) -> None:
        if self.min_pct > self.max_pct:  # each in [0, 1]: the schema checks that
            raise StoryflowError(
                f"config: tension.cuts.min_pct ({self.min_pct}) is above tension.cuts.max_pct "
                f"({self.max_pct}): the first cut must come no later than the last; set min_pct "
                "at most max_pct"
            )

    @classmethod
    def from_config(cls, block: Mapping[str, Any]) -> CutSettings:
        """From the validated ``tension.cuts`` block."""
        return settings_from(cls, block, where="tension.cuts")


def sentence_tokens(sentences: Sequence[str], count: Callable[[str], int]) -> list[int]:
    """Tokens per sentence (``count``: tokens of a text): the first as written, the others with
    a leading space."""
    return [count(s if i == 0 else " " + s) for i, s in enumerate(sentences)]


def evenly_spaced(n: int, cap: int | None) -> list[int]:
    """Indices of ``min(n, cap)`` of ``n`` items, evenly spaced, first and last included."""
    if cap is None or n <= cap:
        return list(range(n))
    if cap == 1:
        return [n - 1]
    return sorted({round(x) for x in np.linspace(0, n - 1, cap)})


def context_words(sentences: Sequence[str], i: int) -> int:
    """Words of the sentence preceding the prefix's last one: s(i−1) of position i (0-based
    ``i`` is the prefix's last sentence); 0 for the first position, which has none."""
    return count_words(sentences[i - 1]) if i >= 1 else 0


def story_cuts(
    sentences: Sequence[str], n_tokens: Sequence[int], settings: CutSettings
) -> tuple[list[tuple[int, float, int]], str | None]:
    """Kept cuts of one story as ``(sentence_idx, pct, prefix_tokens)`` and, when there is
    none, why: the story is excluded (``None`` when it has cuts)."""
    words = count_words(*sentences)
    if len(sentences) == 0 or words == 0:
        return [], "empty story"
    if len(sentences) < 2:
        return [], "one sentence: no cut leaves a remainder"
    if words > settings.max_story_words:
        return [], f"{words} words, over tension.cuts.max_story_words ({settings.max_story_words})"
    total = sum(n_tokens)
    prefix = np.cumsum(n_tokens)
    candidates = [
        (i, float(prefix[i] / total), int(prefix[i]))
        for i in range(len(sentences) - 1)  # the last sentence leaves no remainder
        if settings.min_pct <= prefix[i] / total <= settings.max_pct
        and context_words(sentences, i) >= settings.min_words
    ]
    if not candidates:
        return [], (
            f"no cut with {settings.min_pct} <= pct <= {settings.max_pct} whose preceding "
            f"sentence has >= {settings.min_words} words"
        )
    return [candidates[j] for j in evenly_spaced(len(candidates), settings.max_cuts)], None


def plan_cuts(
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    count: Callable[[str], int],
    settings: CutSettings,
    model: str,
    unit: str = "tokens",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cuts of every story (:data:`tables.TENSION_CUTS`) and the stories excluded
    (:data:`tables.TENSION_EXCLUDED`), for the forecaster ``model`` (``count``: the tokens of
    a text with its tokenizer, or its words: ``unit`` says which)."""
    by_story = {
        sid: grp.sort_values("sentence_idx")["text"].astype(str).tolist()
        for sid, grp in sentences.groupby("story_id", sort=False)
    }
    rows, excluded = [], []
    for story in stories.itertuples(index=False):
        sents = by_story.get(story.story_id, [])
        counts = sentence_tokens(sents, count)
        cuts, reason = story_cuts(sents, counts, settings)
        if reason is not None:
            excluded.append(
                tables.TENSION_EXCLUDED.row(
                    story_id=story.story_id,
                    story_type=story.story_type,
                    model=model,
                    n_sentences=len(sents),
                    reason=reason,
                )
            )
            continue
        for number, (i, pct, prefix_tokens) in enumerate(cuts):
            rows.append(
                tables.TENSION_CUTS.row(
                    story_id=story.story_id,
                    story_type=story.story_type,
                    model=model,
                    cut=number,
                    sentence_idx=i,
                    pct=pct,
                    prefix_tokens=prefix_tokens,
                    story_tokens=sum(counts),
                    unit=unit,
                    prefix=" ".join(sents[: i + 1]),
                    remainder=" ".join(sents[i + 1 :]),
                )
            )
    for row in excluded:
        log.info("story %s excluded: %s", row["story_id"], row["reason"])
    log.info(
        "%d cuts in %d stories; %d stories excluded; pct counted in %s",
        len(rows),
        len(stories) - len(excluded),
        len(excluded),
        unit,
    )
    return tables.TENSION_CUTS.frame(rows), tables.TENSION_EXCLUDED.frame(excluded)
