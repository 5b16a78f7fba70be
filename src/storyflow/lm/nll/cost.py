"""What the NLL stage will cost, known before it is spent (docs/cost_and_failures.md).

The pass plan of a story (``storyflow.lm.nll.planning.plan_passes``) depends only on its token
counts, so the tokens the model will evaluate are known from tokenization alone (``VocabOnly``
loads the tokenizer without the weights). This module turns plans into

* a **cost table** (``COST_DTYPES``): one row per story and formulation, with its planned passes
  and tokens (prefix once + every pass's continuation: what ``PassCounter.tokens`` counts);
* **exclusions** (``EXCLUDED_DTYPES``): a story over the ceiling ``nll.max_story_tokens``, or with
  a sentence that cannot fit the context window even alone, is left out with the reason instead of
  costing hours or crashing the job;
* an **estimate** logged before scoring (planned tokens, expected time at a configured
  ``nll.tokens_per_second``) and **progress** lines with the measured rate and the time left.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from storyflow import tables
from storyflow.lm.nll.planning import BeyondWindow, StoryTokens, plan_passes

COST_DTYPES = tables.NLL_COST.columns

EXCLUDED_DTYPES = tables.NLL_EXCLUDED.columns


@dataclass(frozen=True)
class PlanCost:
    """Forward passes of one story and formulation, and the tokens they evaluate."""

    passes: int
    tokens: int  # prefix once + every pass's continuation


def plan_cost(
    prefix_len: int,
    lengths: Sequence[int],
    max_history: int,
    capacity: int,
    beyond_window: BeyondWindow = "shared",
) -> PlanCost:
    """Passes and planned tokens of one story and formulation, from its token counts alone."""
    plan = plan_passes(prefix_len, lengths, max_history, capacity, beyond_window)
    ends = np.cumsum([0, *lengths])
    body = sum(int(ends[step.stop] - ends[step.start]) for step in plan)
    return PlanCost(len(plan), prefix_len + body)


def prefix_lengths(story: StoryTokens, formulations: Sequence[str], start: int) -> dict[str, int]:
    """Prefix tokens per formulation the story has."""
    return {f: len(story.prefix(f, start)) for f in story.formulations(formulations)}


def exclusion_reason(
    story: StoryTokens,
    prefixes: Mapping[str, int],
    capacity: int,
    max_story_tokens: int | None,
    *,
    max_history: int = 9,
    beyond_window: BeyondWindow = "shared",
    tokens_per_second: float | None = None,
) -> str | None:
    """Why ``story`` cannot be scored, or None when it can.

    ``prefixes``: prefix tokens per formulation (``prefix_lengths``); ``capacity``: the largest
    window (``nll.max_context_tokens``, at most the model's training context). A sentence that
    does not fit ``capacity`` after the longest prefix cannot be scored at all; a story of more
    than ``max_story_tokens`` tokens (None: no ceiling) would cost too much.
    """
    if not prefixes:
        return None
    lengths = [len(s) for s in story.sentences]
    longest_prefix = max(prefixes.values())
    reasons = []
    worst = int(np.argmax(lengths))
    if longest_prefix + lengths[worst] > capacity:
        n_over = sum(longest_prefix + n > capacity for n in lengths)
        reasons.append(
            f"sentence {worst} has {lengths[worst]:,} tokens"
            + (f" ({n_over} sentences too long)" if n_over > 1 else "")
            + f": with the {longest_prefix}-token prompt prefix it does not fit the "
            f"{capacity:,}-token context window (nll.max_context_tokens, at most the model's "
            "training context); a text without sentence punctuation? Split it into sentences "
            "or raise nll.max_context_tokens"
        )
    total = sum(lengths)
    if max_story_tokens is not None and total > max_story_tokens:
        reason = (
            f"{total:,} tokens in {len(lengths):,} sentences, over nll.max_story_tokens = "
            f"{max_story_tokens:,}"
        )
        if not reasons:  # plannable: say what it would have cost
            planned = sum(
                plan_cost(p, lengths, max_history, capacity, beyond_window).tokens
                for p in prefixes.values()
            )
            reason += f": scoring it would evaluate {planned:,} tokens"
            if tokens_per_second:
                reason += f" (about {format_duration(planned / tokens_per_second)})"
        reasons.append(reason + "; raise nll.max_story_tokens to score it")
    return "; ".join(reasons) if reasons else None


def excluded_row(story: StoryTokens, model: str, reason: str) -> dict[str, Any]:
    """One :data:`storyflow.tables.NLL_EXCLUDED` row (a record by column name)."""
    lengths = [len(s) for s in story.sentences]
    return tables.NLL_EXCLUDED.row(
        story_id=story.story_id,
        model=model,
        n_sentences=len(lengths),
        story_tokens=sum(lengths),
        longest_sentence=max(lengths, default=0),
        reason=reason,
    )


def story_costs(
    story: StoryTokens,
    prefixes: Mapping[str, int],
    model: str,
    max_history: int,
    capacity: int,
    beyond_window: BeyondWindow = "shared",
) -> list[dict[str, Any]]:
    """:data:`storyflow.tables.NLL_COST` rows (records by column name) of one story, one per
    formulation it has."""
    lengths = [len(s) for s in story.sentences]
    rows = []
    for formulation, prefix_len in prefixes.items():
        cost = plan_cost(prefix_len, lengths, max_history, capacity, beyond_window)
        rows.append(
            tables.NLL_COST.row(
                story_id=story.story_id,
                model=model,
                formulation=formulation,
                n_sentences=len(lengths),
                story_tokens=sum(lengths),
                longest_sentence=max(lengths),
                prefix_tokens=prefix_len,
                beyond_window=prefix_len + sum(lengths) > capacity,
                passes=cost.passes,
                planned_tokens=cost.tokens,
            )
        )
    return rows


def format_duration(seconds: float) -> str:
    """``2 h 05 min``, ``4 min 40 s``, ``35 s``."""
    if not math.isfinite(seconds):
        return "unknown"
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


def estimate_lines(
    model: str,
    cost: pd.DataFrame,
    excluded: pd.DataFrame,
    n_ctx: int,
    tokens_per_second: float | None,
) -> list[str]:
    """The estimate logged before scoring: planned tokens, passes, expected time, biggest story."""
    total = int(cost["planned_tokens"].sum())
    per_formulation = cost.groupby("formulation", sort=False)["planned_tokens"].sum()
    n_stories = cost["story_id"].nunique()
    parts = ", ".join(f"{f} {int(t):,}" for f, t in per_formulation.items())
    lines = [
        f"model {model}: planned {total:,} tokens ({parts}) in {int(cost['passes'].sum()):,} "
        f"passes for {_stories(n_stories)}, window {n_ctx:,} tokens"
        + (f"; {_stories(len(excluded))} excluded" if len(excluded) else "")
    ]
    if tokens_per_second:
        lines.append(
            f"model {model}: expected time {format_duration(total / tokens_per_second)} at "
            f"{tokens_per_second:g} tokens/s (nll.tokens_per_second)"
        )
    if n_stories:
        by_story = cost.groupby("story_id", sort=False)["planned_tokens"].sum()
        biggest = str(by_story.idxmax())
        lines.append(
            f"model {model}: most expensive story {biggest}: {int(by_story.max()):,} planned "
            f"tokens ({by_story.max() / max(total, 1):.0%} of the plan)"
        )
        beyond = cost.loc[cost["beyond_window"], "story_id"].nunique()
        if beyond:
            lines.append(
                f"model {model}: {_stories(beyond)} longer than the {n_ctx:,}-token window: "
                "rows whose history does not fit have truncated = True (n_history: sentences seen)"
            )
    return lines


def _stories(n: int) -> str:
    return f"{n} story" if n == 1 else f"{n} stories"


class Progress:
    """Progress lines for the rule's log: stories and tokens done, rate, time left.

    A line comes after the first story (the rate measured on it), then at least one every
    ``interval`` seconds (None: :func:`storyflow.progress.log_interval`, 60 s unless
    ``$STORYFLOW_PROGRESS_SECONDS`` says otherwise) and one at the end. Between stories, while
    :meth:`watching` the scorer's count of tokens evaluated, a line comes from a watcher thread
    each ``interval`` too, so a long story (or one long batch) is not minutes of silence: its
    tokens so far are those the scorer has evaluated since the last story ended (capped at the
    plan's). ``clock``: a monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(
        self,
        model: str,
        n_stories: int,
        planned_tokens: int,
        log: logging.Logger,
        interval: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        from storyflow.progress import log_interval

        self.model = model
        self.n_stories = n_stories
        self.planned = planned_tokens
        self.log = log
        self.interval = log_interval() if interval is None else interval
        self.clock = clock
        self.began = clock()
        self.last: float | None = None
        self.stories = 0
        self.tokens = 0
        self._evaluated: Callable[[], int] | None = None
        self._evaluated_at_story = 0  # the scorer's count when the last story ended
        self._lock = threading.Lock()

    def story_done(self, planned_tokens: int) -> None:
        """Count one story and its planned tokens; log when it is the first or the last, or
        when ``interval`` seconds have passed since the last line."""
        with self._lock:
            self.stories += 1
            self.tokens += planned_tokens
            if self._evaluated is not None:
                self._evaluated_at_story = self._evaluated()
            now = self.clock()
            recent = self.last is not None and now - self.last < self.interval
            if recent and self.stories < self.n_stories:
                return
            self._line(now, self.tokens)

    def beat(self) -> None:
        """A line when ``interval`` seconds have passed since the last one (or since the start),
        with the tokens evaluated in the story under way: the watcher thread's call."""
        with self._lock:
            now = self.clock()
            if now - (self.last if self.last is not None else self.began) < self.interval:
                return
            under_way = 0
            if self._evaluated is not None:
                under_way = max(0, self._evaluated() - self._evaluated_at_story)
            self._line(now, min(self.tokens + under_way, self.planned))

    @contextlib.contextmanager
    def watching(self, evaluated: Callable[[], int], every: float = 1.0) -> Iterator[None]:
        """While the block runs, a daemon thread calls :meth:`beat` every ``every`` seconds
        (at most ``interval``); ``evaluated``: the scorer's count of tokens evaluated. The
        scoring itself is untouched: llama.cpp, torch and HTTP waits release the GIL."""
        self._evaluated = evaluated
        self._evaluated_at_story = evaluated()
        stop = threading.Event()

        def watch() -> None:
            while not stop.wait(min(every, self.interval)):
                self.beat()

        watcher = threading.Thread(target=watch, name=f"progress {self.model}", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
            self._evaluated = None

    def _line(self, now: float, tokens: int) -> None:
        self.last = now
        elapsed = now - self.began
        rate = tokens / elapsed if elapsed > 0 else float("nan")
        left = (self.planned - tokens) / rate if rate > 0 else float("nan")
        pace = (
            f"{rate:.1f} tokens/s, about "
            + (format_duration(left) if tokens < self.planned else "0 s")
            + " left"
            if rate > 0
            else "no token scored yet (the first batch is under way)"
        )
        self.log.info(
            "model %s: %d/%d stories, %s/%s planned tokens (%.0f%%) in %s, %s",
            self.model,
            self.stories,
            self.n_stories,
            f"{tokens:,}",
            f"{self.planned:,}",
            100 * tokens / max(self.planned, 1),
            format_duration(elapsed),
            pace,
        )


def corpus_estimate(
    costs: Mapping[str, pd.DataFrame],
    excluded: Mapping[str, pd.DataFrame],
    tokens_per_second: Mapping[str, float],
) -> pd.DataFrame:
    """The NLL stage of one corpus, per model: stories, planned tokens, expected seconds.

    ``costs`` and ``excluded``: each model's plan tables (:data:`storyflow.tables.NLL_COST`,
    :data:`storyflow.tables.NLL_EXCLUDED`). ``expected_seconds`` = planned tokens / the model's
    rate in ``tokens_per_second`` (tokens/s by model name, :func:`storyflow.lm.rates.model_rates`'
    ``nll``; NaN for a model it leaves out); the table is :data:`storyflow.tables.NLL_ESTIMATE`.
    """
    rows = []
    for model, cost in costs.items():
        planned = int(cost["planned_tokens"].sum())
        rate = tokens_per_second.get(model)
        seconds = planned / rate if rate else float("nan")
        rows.append(
            tables.NLL_ESTIMATE.row(
                model=model,
                n_stories=int(cost["story_id"].nunique()),
                n_excluded=len(excluded[model]),
                passes=int(cost["passes"].sum()),
                planned_tokens=planned,
                tokens_per_second=float(rate) if rate else float("nan"),
                expected_seconds=seconds,
            )
        )
    return tables.NLL_ESTIMATE.frame(rows)


def estimate_summary(estimate: pd.DataFrame) -> list[str]:
    """The lines :func:`corpus_estimate`'s table is logged as (one per model, then the total)."""
    lines = []
    for row in estimate.itertuples(index=False):
        when = (
            f"about {format_duration(row.expected_seconds)} at {row.tokens_per_second:g} tokens/s"
            if math.isfinite(row.expected_seconds)
            else "no rate set for it (nll.tokens_per_second); the shards log their measured rate"
        )
        lines.append(
            f"model {row.model}: {row.n_stories} stories to score ({row.n_excluded} left out), "
            f"{row.planned_tokens:,} planned tokens: {when}"
        )
    total = estimate["expected_seconds"].sum(min_count=1)
    if len(estimate) > 1 and math.isfinite(total):
        lines.append(f"all models: about {format_duration(total)} of NLL scoring")
    return lines
