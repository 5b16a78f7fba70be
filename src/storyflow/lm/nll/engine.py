"""The NLL engine's corpus run: every story, sentence, formulation and history size of a shard.

``run_corpus`` (and ``score_corpus``, its NLL table alone) tokenizes the shard's stories, leaves
out those that cannot or should not be scored, sizes the context window and logs what the run
will cost (``plan_corpus``, ``storyflow.lm.nll.cost``), then plans each story's passes
(``storyflow.lm.nll.planning``) and sends them to the model's scorer, whatever backend runs it
(``storyflow.lm.backends.registry``), story by story or packed across the shard
(``storyflow.lm.nll.packing``); the
result is the NLL table (``storyflow.tables.NLL``), one row per term, in nats/token.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from tqdm import tqdm

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.history import FULL, history_labels
from storyflow.lm.backends import Scorer, score_requests
from storyflow.lm.backends.llama_cpp import default_n_batch, default_n_seq
from storyflow.lm.nll.cost import (
    Progress,
    estimate_lines,
    excluded_row,
    exclusion_reason,
    prefix_lengths,
    story_costs,
)
from storyflow.lm.nll.packing import pack, padded_tokens, score_packed, shard_jobs
from storyflow.lm.nll.planning import (
    BeyondWindow,
    PassCounter,
    StoryTokens,
    TermResult,
    context_size,
    pass_tokens,
    plan_passes,
    read_terms,
    tokenize_story,
)
from storyflow.lm.prompts import ChatPrompt
from storyflow.settings import settings_from

if TYPE_CHECKING:
    from storyflow.lm.connect import LanguageModel

log = logging.getLogger(__name__)


NLL_DTYPES = tables.NLL.columns


@dataclass(frozen=True)
class NllSettings:
    """Settings of one NLL extraction: the config's ``nll:`` block (defaults and ranges in the
    config schema) plus the rule's threads; built with :meth:`from_config`.

    ``max_story_tokens``: stories of more tokens are excluded (None: no ceiling;
    ``storyflow.lm.nll.cost``); ``beyond_window``: full-history targets beyond the window read
    from shared windows (linear cost) or with the longest history; ``tokens_per_second``: the
    rate of the time estimate logged before scoring (None: measured while scoring); ``n_batch``
    and ``n_seq`` are resolved per device (``null`` in the config: the device's default).
    """

    max_history: int
    formulations: tuple[str, ...]
    max_context_tokens: int
    n_gpu_layers: int
    n_batch: int
    n_seq: int
    n_threads: int
    max_story_tokens: int | None
    beyond_window: BeyondWindow
    tokens_per_second: float | None

    @classmethod
    def from_config(
        cls, block: Mapping[str, Any], threads: int = 1, tokens_per_second: float | None = None
    ) -> NllSettings:
        """From the validated ``nll:`` block (or the rule's params taken from it: they leave out
        the throughput-only ``shards`` and ``tokens_per_second``) and the rule's ``threads``;
        ``n_batch`` and ``n_seq`` null become the device's defaults. ``tokens_per_second``: the
        rate of the expected-time lines, None (as in the jobs) for none. ``n_gpu_layers`` is the
        model's (``models[].device``), which ``plan.sequentiality.nll_settings`` adds to the
        rule's params; the config's ``nll`` block alone runs on the CPU (0)."""
        gpu = int(block.get("n_gpu_layers") or 0)
        return settings_from(
            cls,
            block,
            where="nll",
            tokens_per_second=tokens_per_second,
            n_threads=threads,
            n_gpu_layers=gpu,
            n_batch=default_n_batch(gpu, block["n_batch"]),
            n_seq=default_n_seq(gpu, block["n_seq"]),
        )


def score_terms(
    scorer: Scorer,
    prefix: list[int],
    sentences: list[list[int]],
    max_history: int,
    capacity: int,
    counter: PassCounter | None = None,
    beyond_window: BeyondWindow = "longest",
) -> dict[tuple[int, int], TermResult]:
    """Score every (requested context start c, target i) term of one story and formulation.

    One forward pass per context start c over prefix + s_c..s_last (see the module docstring);
    terms that do not fit ``capacity`` tokens get their history truncated from the left, full
    histories as ``beyond_window`` says (``storyflow.lm.nll.planning``).
    """
    return score_stories(
        scorer, [(prefix, sentences)], max_history, capacity, counter, beyond_window=beyond_window
    )[0]


def score_stories(
    scorer: Scorer,
    jobs: Sequence[tuple[list[int], list[list[int]]]],
    max_history: int,
    capacity: int,
    counter: PassCounter | None = None,
    names: Sequence[str] | None = None,
    beyond_window: BeyondWindow = "longest",
) -> list[dict[tuple[int, int], TermResult]]:
    """``score_terms`` for several (prefix, sentences) jobs, all their passes sent at once.

    All passes of all jobs go to the scorer in one request list (job by job, passes in order), so
    a batched scorer can put passes of different stories and formulations in one batch.
    ``names`` (one per job) label the error raised when a job's sentence cannot fit.
    """
    counter = counter if counter is not None else PassCounter()
    lengths = [[len(s) for s in sentences] for _, sentences in jobs]
    plans = []
    for j, (prefix, _) in enumerate(jobs):
        try:
            plans.append(plan_passes(len(prefix), lengths[j], max_history, capacity, beyond_window))
        except StoryflowError as err:
            raise StoryflowError(f"{names[j]}: {err}" if names else str(err)) from err
    requests = []
    for (prefix, sentences), plan in zip(jobs, plans, strict=True):
        counter.tokens += len(prefix)
        for step in plan:
            continuation = pass_tokens(sentences, step)
            requests.append((prefix, continuation))
            counter.passes += 1
            counter.tokens += len(continuation)
    logprobs = iter(score_requests(scorer, requests))
    results = []
    for story_lengths, plan in zip(lengths, plans, strict=True):
        terms: dict[tuple[int, int], TermResult] = {}
        for step in plan:
            terms.update(read_terms(story_lengths, step, next(logprobs)))
        results.append(terms)
    return results


def score_story(
    scorer: Scorer,
    story: StoryTokens,
    formulations: Sequence[str],
    start: int,
    max_history: int,
    capacity: int,
    counter: PassCounter | None = None,
    beyond_window: BeyondWindow = "longest",
) -> dict[str, dict[tuple[int, int], TermResult]]:
    """Terms per formulation of one story (those it has), all its passes sent at once.

    A batched scorer fills its batches with the passes of both formulations, and a story's NLLs
    do not depend on the other stories of the run.
    """
    present = story.formulations(formulations)
    terms = score_stories(
        scorer,
        [(story.prefix(formulation, start), story.sentences) for formulation in present],
        max_history,
        capacity,
        counter,
        names=[f"story {story.story_id} ({formulation})" for formulation in present],
        beyond_window=beyond_window,
    )
    return dict(zip(present, terms, strict=True))


def story_rows(
    story: StoryTokens,
    terms: Mapping[tuple[int, int], TermResult],
    model: str,
    formulation: str,
    max_history: int,
) -> list[dict[str, Any]]:
    """Long-format :data:`storyflow.tables.NLL` rows (records by column name) of one story and
    formulation."""
    rows = []
    for i in range(len(story.sentences)):
        for label in history_labels(max_history):
            requested = 0 if label == FULL else max(0, i - int(label))
            term = terms[(requested, i)]
            rows.append(
                tables.NLL.row(
                    story_id=story.story_id,
                    sentence_idx=i,
                    model=model,
                    formulation=formulation,
                    history=label,
                    n_history=i - term.context_start,
                    n_tokens=term.n_tokens,
                    nll=term.nll,
                    nll_first=term.nll_first,
                    truncated=term.context_start > requested,
                )
            )
    return rows


def select_shard(stories: pd.DataFrame, shard: int, n_shards: int) -> pd.DataFrame:
    """Shard ``shard`` (0-based) of ``n_shards``: every n-th story in story_id order.

    Round-robin over sorted ids spreads long and short stories evenly and is deterministic.
    """
    if not 0 <= shard < n_shards:
        raise ValueError(f"shard {shard} outside 0..{n_shards - 1}")
    ordered = stories.sort_values("story_id").reset_index(drop=True)
    return ordered.iloc[shard::n_shards].reset_index(drop=True)


def gather_shards(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate shard tables; a story scored in two shards is a bug and raises ValueError."""
    table = pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True)
    keys = ["story_id", "sentence_idx", "model", "formulation", "history"]
    duplicated = table.duplicated(keys)
    if duplicated.any():
        raise ValueError(f"{int(duplicated.sum())} NLL rows appear in more than one shard")
    return table.sort_values(
        ["story_id", "formulation", "sentence_idx"], kind="stable"
    ).reset_index(drop=True)


@dataclass
class CorpusPlan:
    """A shard's stories tokenized and screened, its window sized and its cost planned."""

    stories: list[StoryTokens]  # the stories to score
    start: int  # start token
    capacity: int  # the largest window allowed (nll.max_context_tokens, training context)
    needed: int  # tokens of the longest full-history sequence of the stories kept
    n_ctx: int  # the window allocated
    cost: pd.DataFrame  # storyflow.lm.nll.cost.COST_DTYPES
    excluded: pd.DataFrame  # storyflow.lm.nll.cost.EXCLUDED_DTYPES

    @property
    def planned_tokens(self) -> int:
        return int(self.cost["planned_tokens"].sum())


@dataclass
class CorpusRun:
    """The outcome of ``run_corpus``: NLL rows, the cost plan, and the stories left out."""

    nll: pd.DataFrame  # NLL_DTYPES
    cost: pd.DataFrame  # COST_DTYPES
    excluded: pd.DataFrame  # EXCLUDED_DTYPES


def empty_nll() -> pd.DataFrame:
    return tables.NLL.empty()


def _screen(
    model: LanguageModel,
    stories: pd.DataFrame,
    texts: Mapping[Any, Sequence[str]],
    chat: ChatPrompt | None,
    capacity: int,
    settings: NllSettings,
) -> tuple[list[StoryTokens], list[dict[str, int]], list[dict[str, Any]]]:
    """The ``stories`` tokenized (``texts``: story_id → sentences; ``chat``: the chat frame,
    None for plain prompts) and screened against a window of at most ``capacity`` tokens:
    the stories kept, their prefix tokens per formulation, and the NLL_EXCLUDED rows of
    those left out (each logged, as is a story without sentences)."""
    vocab, model_name = model.vocab, model.name
    kept: list[StoryTokens] = []
    prefixes: list[dict[str, int]] = []
    excluded = []
    for row in stories.itertuples(index=False):
        if row.story_id not in texts:
            log.warning("story %s has no sentences: skipped", row.story_id)
            continue
        topic = row.topic if isinstance(row.topic, str) and row.topic.strip() else None
        story = tokenize_story(vocab, row.story_id, texts[row.story_id], topic, chat)
        story_prefixes = prefix_lengths(story, settings.formulations, vocab.start_token)
        reason = exclusion_reason(
            story,
            story_prefixes,
            capacity,
            settings.max_story_tokens,
            max_history=settings.max_history,
            beyond_window=settings.beyond_window,
            tokens_per_second=settings.tokens_per_second,
        )
        if reason is not None:
            log.warning("model %s: story %s excluded: %s", model_name, story.story_id, reason)
            excluded.append(excluded_row(story, model_name, reason))
            continue
        kept.append(story)
        prefixes.append(story_prefixes)
    return kept, prefixes, excluded


def plan_corpus(
    model: LanguageModel,
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: NllSettings,
) -> CorpusPlan:
    """Tokenize, screen and plan a shard without loading the model's weights (a dry run).

    A story over ``settings.max_story_tokens`` or with a sentence that cannot fit the window is
    left out (``CorpusPlan.excluded``, with the reason, and a logged warning); the others get
    their cost rows (``CorpusPlan.cost``). The estimate is logged (``estimate_lines``). A
    served model's server is asked, before any scoring, whether it reads the first story's
    prompts as planned and returns every value the plan reads (one short request per
    formulation).
    """
    model_name, prompt = model.name, model.mode
    vocab = model.vocab
    start = vocab.start_token
    if prompt not in ("plain", "chat"):
        raise ValueError(f"prompt must be plain or chat, not {prompt!r}")
    chat = ChatPrompt(vocab.llm, model_name) if prompt == "chat" else None
    by_story = sentences.sort_values(["story_id", "sentence_idx"]).groupby("story_id", sort=False)
    texts = {sid: list(group["text"]) for sid, group in by_story}
    capacity = min(settings.max_context_tokens, vocab.n_ctx_train)
    kept, prefixes, excluded = _screen(model, stories, texts, chat, capacity, settings)
    needed = context_size(kept, settings.formulations, start)
    n_ctx = min(capacity, -(-needed // 64) * 64)
    cost_rows = []
    for story, story_prefixes in zip(kept, prefixes, strict=True):
        cost_rows.extend(
            story_costs(
                story,
                story_prefixes,
                model_name,
                settings.max_history,
                n_ctx,
                settings.beyond_window,
            )
        )
    plan = CorpusPlan(
        stories=kept,
        start=start,
        capacity=capacity,
        needed=needed,
        n_ctx=n_ctx,
        cost=tables.NLL_COST.frame(cost_rows),
        excluded=tables.NLL_EXCLUDED.frame(excluded),
    )
    _log_plan(plan, model_name, prompt, settings.tokens_per_second)
    if model.spec.served and plan.stories:
        # before any scoring: the server reads the planned tokens and gives every value the
        # plan reads (a prefix and the first sentence of the first story, per formulation)
        first = plan.stories[0]
        model.check_server(
            [
                (first.prefix(formulation, start), first.sentences[0])
                for formulation in first.formulations(settings.formulations)
            ]
        )
    return plan


def _log_plan(
    plan: CorpusPlan, model_name: str, prompt: str, tokens_per_second: float | None
) -> None:
    """Log a plan's window and the cost estimate (:func:`estimate_lines`, at
    ``tokens_per_second``; None: no time) of a model with ``prompt`` framing (plain or chat)."""
    log.info(
        "model %s: %d stories, %s prompts, longest sequence %d tokens, context window %d "
        "(cap %d), start token %d",
        model_name,
        len(plan.stories),
        prompt,
        plan.needed,
        plan.n_ctx,
        plan.capacity,
        plan.start,
    )
    for line in estimate_lines(model_name, plan.cost, plan.excluded, plan.n_ctx, tokens_per_second):
        log.info("%s", line)


def score_corpus(
    model: LanguageModel,
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: NllSettings,
) -> pd.DataFrame:
    """NLL table (columns of ``NLL_DTYPES``) of every story, sentence, formulation and history size.

    ``run_corpus``'s NLL table; the stories it leaves out are logged.
    """
    return run_corpus(model, stories, sentences, settings).nll


def _score_plan(
    scorer: Scorer, plan: CorpusPlan, model_name: str, settings: NllSettings
) -> list[dict[str, Any]]:
    """The NLL rows of every story of ``plan``, scored by ``scorer`` in the plan's window;
    progress (stories and planned tokens) and the passes and tokens evaluated are logged."""
    planned = plan.cost.groupby("story_id", sort=False)["planned_tokens"].sum()
    progress = Progress(model_name, len(plan.stories), plan.planned_tokens, log)
    counter = PassCounter()
    rows: list[dict[str, Any]] = []
    began = time.perf_counter()
    with progress.watching(lambda: scorer.tokens_evaluated):  # a line at least every minute
        for story in tqdm(plan.stories, desc=f"NLL {model_name}", unit="story"):
            terms = score_story(
                scorer,
                story,
                settings.formulations,
                plan.start,
                settings.max_history,
                plan.n_ctx,
                counter,
                beyond_window=settings.beyond_window,
            )
            for formulation, story_terms in terms.items():
                rows.extend(
                    story_rows(story, story_terms, model_name, formulation, settings.max_history)
                )
            progress.story_done(int(planned.get(story.story_id, 0)))
    elapsed = time.perf_counter() - began
    log.info(
        "model %s: %d forward passes, %d tokens evaluated in %.1f s (%.1f tokens/s); "
        "lower bound (prefixes once + each target once per distinct context) %d tokens",
        model_name,
        counter.passes,
        scorer.tokens_evaluated,
        elapsed,
        scorer.tokens_evaluated / elapsed if elapsed else float("nan"),
        counter.tokens,
    )
    return rows


def _score_packed(
    scorer: Scorer, plan: CorpusPlan, model_name: str, settings: NllSettings
) -> list[dict[str, Any]]:
    """:func:`_score_plan` with the shard's passes packed across stories
    (:mod:`storyflow.lm.nll.packing`): the same rows, in the plan's story order; progress is
    logged as each story's last pass is scored."""
    jobs = shard_jobs(
        plan.stories,
        settings.formulations,
        plan.start,
        settings.max_history,
        plan.n_ctx,
        settings.beyond_window,
    )
    batches = pack(jobs, settings.n_seq, settings.n_batch)
    real = sum(job.width(k) for job in jobs for k in range(len(job.passes)))
    padded = padded_tokens(jobs, batches)
    log.info(
        "model %s: %d passes of %d stories packed into %d batches: %s tokens, %s with padding "
        "(%.1f%% padding)",
        model_name,
        sum(len(job.passes) for job in jobs),
        len(plan.stories),
        len(batches),
        f"{real:,}",
        f"{padded:,}",
        100 * (padded - real) / max(padded, 1),
    )
    planned = plan.cost.groupby("story_id", sort=False)["planned_tokens"].sum()
    progress = Progress(model_name, len(plan.stories), plan.planned_tokens, log)
    rows: dict[int, list[dict[str, Any]]] = {}

    def story_done(s: int, terms: Mapping[str, Mapping[tuple[int, int], TermResult]]) -> None:
        story = plan.stories[s]
        rows[s] = [
            row
            for formulation, story_terms in terms.items()
            for row in story_rows(story, story_terms, model_name, formulation, settings.max_history)
        ]
        progress.story_done(int(planned.get(story.story_id, 0)))

    counter = PassCounter()
    began = time.perf_counter()
    score_packed(scorer, jobs, batches, story_done, counter, desc=f"NLL {model_name}")
    elapsed = time.perf_counter() - began
    log.info(
        "model %s: %d forward passes in %d batches, %d tokens evaluated in %.1f s (%.1f "
        "tokens/s); lower bound (prefixes once + each target once per distinct context) %d "
        "tokens",
        model_name,
        counter.passes,
        len(batches),
        scorer.tokens_evaluated,
        elapsed,
        scorer.tokens_evaluated / elapsed if elapsed else float("nan"),
        counter.tokens,
    )
    return [row for s in range(len(plan.stories)) for row in rows[s]]


def run_corpus(
    model: LanguageModel,
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: NllSettings,
    on_plan: Callable[[CorpusPlan], None] | None = None,
) -> CorpusRun:
    """NLL table of every story, sentence, formulation and history size, its cost and exclusions.

    ``model``: the opened model (:func:`storyflow.lm.connect.open_model`), whatever backend runs
    it (:mod:`storyflow.lm.backends.registry`): its vocabulary plans the passes, its prompt
    (``plain``: start token, topic, "\\n\\n"; ``chat``: its chat template,
    storyflow.lm.prompts) frames them, and its scorer scores them in the window the plan
    sizes, ``settings.n_seq`` passes per batch of at most ``settings.n_batch`` tokens: one
    story's passes at a time, or, on a backend that packs (``packs_stories``, with ``n_seq`` >
    1), the shard's passes sorted by length across stories (:mod:`storyflow.lm.nll.packing`).
    ``stories`` needs ``story_id``, ``topic`` (None when missing); ``sentences`` needs
    ``story_id``, ``sentence_idx``, ``text``. Stories without a topic get context rows only.
    The plan (``plan_corpus``: cost, exclusions, logged estimate) is made first, without the
    weights, and handed to ``on_plan`` before any scoring (to write the cost table early).
    """
    model_name = model.name
    if stories.empty:
        log.info("model %s: no stories in this shard", model_name)
        return CorpusRun(empty_nll(), tables.NLL_COST.empty(), tables.NLL_EXCLUDED.empty())
    plan = plan_corpus(model, stories, sentences, settings)
    if on_plan is not None:
        on_plan(plan)
    if not plan.stories:
        log.warning("model %s: no story of this shard can be scored", model_name)
        return CorpusRun(empty_nll(), plan.cost, plan.excluded)
    n_ctx = plan.n_ctx
    scorer = model.scorer(n_ctx=n_ctx, n_seq=settings.n_seq, n_batch=settings.n_batch)
    log.info(
        "model %s: backend %s, %d pass(es) per batch of at most %d tokens, %d threads",
        model_name,
        type(scorer).__name__,
        settings.n_seq,
        settings.n_batch,
        model.n_threads,
    )
    packed = settings.n_seq > 1 and model.backend.packs_stories
    score = _score_packed if packed else _score_plan
    table = tables.NLL.frame(score(scorer, plan, model_name, settings))
    n_truncated = int(table["truncated"].sum())
    if n_truncated:
        log.warning("%d rows had their history truncated to fit the context window", n_truncated)
    return CorpusRun(table, plan.cost, plan.excluded)
