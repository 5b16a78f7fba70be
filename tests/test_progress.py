"""Progress files (storyflow.progress): a job's answers kept per question, replayed on a rerun,
scoped by the job's settings, removed when the job succeeds. The kill-and-resume of a real job
is in test_fabula_entropy.py (slow)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import model_entry
from test_plot_holes import FakeModel

from storyflow import progress, runner
from storyflow.errors import StoryflowError
from storyflow.lm.answers import ClosedAnswer
from storyflow.lm.connect import LanguageModel
from storyflow.lm.sampling import Sample, SamplingSettings
from storyflow.lm.specs import ModelSpec


@contextmanager
def root_logging_restored() -> Iterator[None]:
    """Put the root logger's handlers and level back after :func:`storyflow.runner.run`, which
    sends the root logger to the job's log file."""
    root = logging.getLogger()
    kept, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        for handler in kept:
            root.addHandler(handler)
        root.setLevel(level)


def test_answers_are_kept_per_question_and_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "job.sqlite"
    first = progress.Progress(path)
    key = first.key("m", "answer", "Is it red?", ("Yes", "No"))
    assert first.get(key) is None
    first.put(key, {"p": [0.25, 0.75]})
    first.close()  # as a killed process would leave it: committed per item
    again = progress.Progress(path)
    assert again.stored == 1 and again.get(key) == {"p": [0.25, 0.75]}
    assert again.get(again.key("m", "answer", "Is it blue?", ("Yes", "No"))) is None
    assert (again.asked, again.replayed) == (0, 1)


def test_the_key_tells_apart_everything_that_decides_an_answer() -> None:
    key = progress.Progress.key
    base = key("m", "sample", "prompt", 2, SamplingSettings(temperature=0.7, seed=1))
    assert base == key("m", "sample", "prompt", 2, SamplingSettings(temperature=0.7, seed=1))
    assert base != key("m", "sample", "prompt", 2, SamplingSettings(temperature=0.7, seed=2))
    assert base != key("other", "sample", "prompt", 2, SamplingSettings(temperature=0.7, seed=1))
    assert base != key("m", "sample", "prompt!", 2, SamplingSettings(temperature=0.7, seed=1))


def smk(folder: Path, **params) -> SimpleNamespace:
    return SimpleNamespace(
        rule="answer", output=[str(folder / "answers.parquet")], input=["items.parquet"],
        params=params, log=[],
    )  # fmt: skip


def test_a_job_keeps_its_progress_when_it_fails_and_drops_it_when_it_succeeds(tmp_path) -> None:
    job = smk(tmp_path, prompt="Q {story}")
    path = runner.progress_path(job)
    assert path.parent == tmp_path / progress.FOLDER
    assert runner.progress_path(SimpleNamespace(**{**vars(job), "params": {"prompt": "R"}})) != path

    def fails(_):
        progress.current().put("k", 1)
        raise RuntimeError("killed")

    with pytest.raises(SystemExit):
        runner.run(fails, job)
    assert path.is_file() and progress.Progress(path).get("k") == 1

    seen = []
    runner.run(lambda _: seen.append(progress.current().get("k")), job)
    assert seen == [1]  # resumed with what the failed run had
    assert not path.exists() and not path.parent.exists()  # done: nothing left behind


def test_a_changed_setting_starts_afresh(tmp_path: Path) -> None:
    old = runner.progress_path(smk(tmp_path, prompt="old"))
    progress.Progress(old).put("k", 1)
    new = smk(tmp_path, prompt="new")
    runner.run(lambda _: progress.current().get("k") is None or pytest.fail("reused"), new)
    assert not old.exists()  # the other setting's progress was removed when the job started


def spec() -> ModelSpec:
    server = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    return ModelSpec.from_config(model_entry(name="m", roles=[], source={"server": server}))


def test_a_model_in_a_job_asks_only_the_questions_without_an_answer(tmp_path: Path) -> None:
    """LanguageModel.answers/sample: stored answers come back without asking the backend."""
    store = progress.Progress(tmp_path / "p.sqlite")
    model = LanguageModel(spec(), progress=store)
    fake = FakeModel(lambda prompt, names: [0.9, 0.1] if "red" in prompt else [0.2, 0.8])
    model.backend.http = SimpleNamespace(  # the server: counts what it is asked
        answers=lambda prompts, options: [fake.answer(p, options) for p in prompts],
        sample=fake.sample,
    )
    first = model.answers(["red?", "blue?"], ("Yes", "No"))
    stored = model.answers(["blue?", "red?"], ("Yes", "No"))
    again = model.answers(["blue?", "red?", "green?"], ("Yes", "No"))
    asked = [p for kind, p, _ in fake.prompts if kind == "answer"]
    # a call with every answer stored asks nothing; a call missing one asks all its prompts
    # again (an answer may depend on the prompts asked with it) and keeps the stored ones
    assert asked == ["red?", "blue?", "blue?", "red?", "green?"]
    assert (
        [a.probs for a in stored]
        == [a.probs for a in again[:2]]
        == [
            first[1].probs,
            first[0].probs,
        ]
    )
    assert isinstance(again[2], ClosedAnswer) and store.replayed == 4
    settings = SamplingSettings(temperature=0.0, max_tokens=4)
    fake.sample_fn = lambda prompt, k, s: ["an ending"] * k
    assert model.sample("Go on:", 2, settings) == model.sample("Go on:", 2, settings)
    assert [kind for kind, *_ in fake.prompts].count("sample") == 1
    assert all(isinstance(s, Sample) for s in model.sample("Go on:", 2, settings))


# --- progress in the rule's log (LoggedBar) ----------------------------------------------------


class FakeClock:
    """A monotonic clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def progress_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "storyflow.progress"]


@pytest.fixture
def clock(caplog: pytest.LogCaptureFixture) -> FakeClock:
    """A clock for a LoggedBar, with storyflow.progress's INFO lines captured
    (:func:`progress_lines`)."""
    caplog.set_level("INFO", logger="storyflow.progress")
    return FakeClock()


def test_a_long_loop_logs_done_total_rate_and_time_left_at_intervals(clock, caplog) -> None:
    seen = []
    for story in progress.LoggedBar(
        range(10), desc="NLL m", unit="story", every=60, clock=clock, disable=None
    ):
        clock.now += 25  # 25 s a story: a line once 60 s have passed since the last one
        seen.append(story)
    assert seen == list(range(10))
    assert progress_lines(caplog) == [
        "NLL m: 0/10 stories (0%), started",
        "NLL m: 3/10 stories (30%), 25.0 s/story, 2 min 55 s left",
        "NLL m: 6/10 stories (60%), 25.0 s/story, 1 min 40 s left",
        "NLL m: 9/10 stories (90%), 25.0 s/story, 25 s left",
        "NLL m: 10/10 stories (100%) done in 4 min 10 s, 25.0 s/story",
    ]


def test_a_bar_updated_by_hand_logs_its_rate_and_ends_once(clock, caplog) -> None:
    bar = progress.LoggedBar(total=400, desc="validation pool", unit="pair", every=30, clock=clock)
    clock.now += 10
    bar.update(100)  # 10 s: not yet a line
    clock.now += 30
    bar.update(100)  # 40 s after the start, 200 pairs: 5 pairs/s, 40 s left
    bar.close()
    bar.close()
    assert progress_lines(caplog) == [
        "validation pool: 0/400 pairs (0%), started",
        "validation pool: 200/400 pairs (50%), 5.00 pair/s, 40 s left",
        "validation pool: 200/400 pairs (50%) done in 40 s, 5.00 pair/s",
    ]


def test_a_loop_of_unknown_length_and_a_disabled_bar(clock, caplog) -> None:
    for _ in progress.LoggedBar(iter("abc"), desc="judge", every=0, clock=clock):
        clock.now += 2
    assert progress_lines(caplog)[1:] == [
        "judge: 1 item, 2.0 s/item",  # no total: no share and no time left
        "judge: 2 items, 2.0 s/item",
        "judge: 3 items, 2.0 s/item",
        "judge: 3 items done in 6 s, 2.0 s/item",
    ]
    caplog.clear()
    assert list(progress.LoggedBar([1, 2], desc="priors", disable=True, every=0)) == [1, 2]
    assert progress_lines(caplog) == []  # nothing to do: neither a bar nor log lines


def test_the_interval_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.delenv(progress.INTERVAL_VARIABLE, raising=False)
    assert progress.log_interval() == 60
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "5")
    assert progress.log_interval() == 5 and progress.LoggedBar(total=1)._every == 5
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "soon")
    with pytest.raises(StoryflowError, match="STORYFLOW_PROGRESS_SECONDS='soon'"):
        progress.log_interval()


def test_the_progress_lines_reach_the_rule_log(tmp_path: Path) -> None:
    """Through storyflow.runner.run, as a script's job: the rule's log file has the lines."""
    log_file = tmp_path / "logs" / "score.log"
    job = SimpleNamespace(rule="score", log=[str(log_file)], output=[], input=[], params={})
    with root_logging_restored():
        runner.run(lambda _: list(progress.LoggedBar(range(3), desc="NLL m", every=0)), job)
    text = log_file.read_text()
    assert "storyflow.progress: NLL m: 0/3 items (0%), started" in text
    assert "storyflow.progress: NLL m: 2/3 items (67%)" in text
    assert "storyflow.progress: NLL m: 3/3 items (100%) done in" in text


def test_progress_duration_words() -> None:
    assert [progress.duration(s) for s in (0.4, 59.4, 61, 3599, 3600, 7505)] == [
        "0 s", "59 s", "1 min 01 s", "59 min 59 s", "1 h 00 min", "2 h 05 min",
    ]  # fmt: skip


def test_a_loop_stopped_by_an_error_says_stopped_not_done(clock, caplog) -> None:
    """Issue 56: a failed served job logged "0/100 version (0%) done"; the last line of a loop
    left by an error says it stopped, and every line names its unit in the plural."""
    bar = progress.LoggedBar(range(100), desc="surprisal (m)", unit="version", every=0, clock=clock)
    with pytest.raises(RuntimeError):
        for _ in bar:
            clock.now += 30
            raise RuntimeError("the server went away")
    assert progress_lines(caplog) == [
        "surprisal (m): 0/100 versions (0%), started",
        "surprisal (m): stopped at 0/100 versions (0%) after 30 s, rate unknown",
    ]
    assert [progress.plural(u, 2) for u in ("story", "batch", "version", "day")] == [
        "stories",
        "batches",
        "versions",
        "days",
    ]
    assert progress.plural("story", 1) == "story"


def test_a_job_that_journals_nothing_says_nothing_of_answers(tmp_path: Path) -> None:
    """Issue 56: an NLL shard (its model opened, so its progress file too, but nothing asked
    through it) ended its log with "progress: 0 answers asked in this run"; a job that asked
    answers still says how many, and what they are."""
    quiet = tmp_path / "logs" / "nll.log"
    asking = tmp_path / "logs" / "answers.log"
    with root_logging_restored():
        for log_file, main in (
            (quiet, lambda _: progress.current()),
            (asking, lambda _: progress.current().put("k", 1)),
        ):
            job = SimpleNamespace(rule="r", log=[str(log_file)], input=[], params={},
                                  output=[str(tmp_path / "out" / log_file.stem)])  # fmt: skip
            runner.run(main, job)
    assert "answers asked" not in quiet.read_text()
    assert "progress: 1 answers asked in this run, 0 replayed from" in asking.read_text()
