"""Progress files (storyflow.progress): a job's answers kept per question, replayed on a rerun,
scoped by the job's settings, removed when the job succeeds. The kill-and-resume of a real job
is in test_fabula_entropy.py (slow)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import model_entry
from test_plot_holes import FakeModel

from storyflow import progress, runner
from storyflow.lm.answers import ClosedAnswer
from storyflow.lm.connect import LanguageModel
from storyflow.lm.registry import ModelSpec
from storyflow.lm.sampling import Sample, SamplingSettings


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
