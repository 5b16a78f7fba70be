"""Packed batches: a shard's NLL passes of several stories in one batch (docs/engine.md).

With ``nll.n_seq`` > 1 on a backend that packs (``Backend.packs_stories``: transformers), the
engine does not send one story's passes at a time. Every pass of the shard (each story,
formulation and context start, ``storyflow.lm.nll.planning.plan_passes``) is listed in the plan's
order (the shard's stories in order, the configured formulations, the passes by context start),
sorted by length, prefix included (a stable sort: equal lengths keep that order), and cut into
batches of at most ``n_seq`` rows and ``n_batch`` padded tokens
(:func:`storyflow.lm.backends.padded_batches`). Each batch goes to the scorer as one request
list, which it evaluates as one padded forward pass.

* **Determinism.** The batches depend on the shard alone (its stories, their tokens and the
  settings), so the same shard gives the same batches, and the same numbers bit for bit on the
  same device and software.
* **Neighbours.** A story's NLLs depend, in their last bits, on which passes of other stories
  share its batches: the matrix products' shapes change the order of their sums. Scored in
  another shard, or with one story per batch, a story's NLLs may move by that much (measured on
  the SmolLM2 checkpoint in float32 on a CPU: docs/engine.md, "Packed batches"), as they already
  move from one device to another.
* **Full batches.** Sorted over the shard, neighbouring passes differ little in length, so a
  batch holds ``n_batch`` tokens or ``n_seq`` rows with little padding, where one story's passes
  (whole story down to its last sentence) filled at most its own few thousand tokens, half of
  them padding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from storyflow.errors import StoryflowError
from storyflow.lm.backends import Scorer, padded_batches, score_requests
from storyflow.lm.nll.planning import (
    BeyondWindow,
    Pass,
    PassCounter,
    StoryTokens,
    TermResult,
    pass_tokens,
    plan_passes,
    read_terms,
)

#: A pass of a packed shard: (job, pass) indices into :func:`shard_jobs`' list and its passes.
PassRef = tuple[int, int]


@dataclass(frozen=True)
class Job:
    """One story and formulation of a shard: its prefix tokens and planned passes."""

    story: int  # index of the story in the shard's list
    formulation: str
    prefix: list[int]
    sentences: list[list[int]]
    passes: list[Pass]

    def width(self, k: int) -> int:
        """Tokens of pass ``k``'s sequence: the prefix and its sentences."""
        step = self.passes[k]
        return len(self.prefix) + sum(len(s) for s in self.sentences[step.start : step.stop])


def shard_jobs(
    stories: Sequence[StoryTokens],
    formulations: Sequence[str],
    start: int,
    max_history: int,
    capacity: int,
    beyond_window: BeyondWindow,
) -> list[Job]:
    """Every story and formulation of a shard with its passes, in the plan's order (stories as
    given, formulations as configured: those the story has)."""
    jobs = []
    for s, story in enumerate(stories):
        lengths = [len(sentence) for sentence in story.sentences]
        for formulation in story.formulations(formulations):
            prefix = story.prefix(formulation, start)
            try:
                passes = plan_passes(len(prefix), lengths, max_history, capacity, beyond_window)
            except StoryflowError as err:
                raise StoryflowError(f"story {story.story_id} ({formulation}): {err}") from err
            jobs.append(Job(s, formulation, prefix, story.sentences, passes))
    return jobs


def pack(jobs: Sequence[Job], n_seq: int, n_batch: int) -> list[list[PassRef]]:
    """The shard's batches: every pass of ``jobs`` (in their order, passes by context start)
    sorted by length, longest first, in batches of at most ``n_seq`` rows and ``n_batch``
    padded tokens (:func:`storyflow.lm.backends.padded_batches`)."""
    refs = [(j, k) for j, job in enumerate(jobs) for k in range(len(job.passes))]
    widths = [jobs[j].width(k) for j, k in refs]
    return [[refs[i] for i in batch] for batch in padded_batches(widths, n_seq, n_batch)]


def padded_tokens(jobs: Sequence[Job], batches: Sequence[Sequence[PassRef]]) -> int:
    """Tokens the batches hold, padding included (rows x each batch's longest row)."""
    return sum(len(batch) * jobs[batch[0][0]].width(batch[0][1]) for batch in batches)


def score_packed(
    scorer: Scorer,
    jobs: Sequence[Job],
    batches: Sequence[Sequence[PassRef]],
    story_done: Callable[[int, dict[str, dict[tuple[int, int], TermResult]]], None],
    counter: PassCounter | None = None,
    desc: str = "NLL",
) -> None:
    """Score ``batches`` (:func:`pack`) of ``jobs``, one scorer call per batch, and hand each
    story's terms per formulation to ``story_done(story, terms)`` as soon as its last pass is
    scored (stories finish in the order their passes do). ``counter`` counts the passes and the
    lower bound of tokens (each prefix once, every continuation)."""
    counter = counter if counter is not None else PassCounter()
    left: dict[int, int] = {}
    for job in jobs:
        left[job.story] = left.get(job.story, 0) + len(job.passes)
        counter.passes += len(job.passes)
        counter.tokens += sum(job.width(k) - len(job.prefix) for k in range(len(job.passes)))
        counter.tokens += len(job.prefix)
    of_story: dict[int, list[int]] = {}
    for j, job in enumerate(jobs):
        of_story.setdefault(job.story, []).append(j)
    logprobs: dict[PassRef, np.ndarray] = {}
    for batch in tqdm(batches, desc=desc, unit="batch"):
        requests = [
            (jobs[j].prefix, pass_tokens(jobs[j].sentences, jobs[j].passes[k])) for j, k in batch
        ]
        for (j, k), values in zip(batch, score_requests(scorer, requests), strict=True):
            logprobs[(j, k)] = values
            story = jobs[j].story
            left[story] -= 1
            if left[story]:
                continue
            terms = {}
            for jj in of_story[story]:
                job = jobs[jj]
                lengths = [len(sentence) for sentence in job.sentences]
                read: dict[tuple[int, int], TermResult] = {}
                for kk, step in enumerate(job.passes):
                    read.update(read_terms(lengths, step, logprobs.pop((jj, kk))))
                terms[job.formulation] = read
            story_done(story, terms)
