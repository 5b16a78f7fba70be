"""storyflow.settings: settings objects built from validated config blocks, with no defaults of
their own (every default and range is the config schema's)."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import REPO, defaults, schema_defaults

from storyflow import bootstrap, plan
from storyflow.corpora.books import PassageSettings
from storyflow.errors import StoryflowError
from storyflow.lm.nll.engine import NllSettings
from storyflow.lm.specs import ModelSpec
from storyflow.measures.fabula_entropy.items import ItemSettings
from storyflow.measures.fabula_entropy.readers import ReaderSettings
from storyflow.measures.plot_holes import validation
from storyflow.measures.plot_holes.detect import DetectorSettings
from storyflow.measures.plot_holes.llm_maker import MakerSettings
from storyflow.measures.plot_holes.nli import NliSettings
from storyflow.measures.tension import validity as tension_validity
from storyflow.measures.tension.curves import CurveSettings
from storyflow.measures.tension.cuts import CutSettings
from storyflow.settings import settings_from

#: Every settings dataclass built from a config block.
SETTINGS_CLASSES = (
    CutSettings,
    CurveSettings,
    bootstrap.Statistics,
    tension_validity.CheckSettings,
    NllSettings,
    ModelSpec,
    NliSettings,
    DetectorSettings,
    MakerSettings,
    validation.CheckSettings,
    ReaderSettings,
    ItemSettings,
    PassageSettings,
)


@dataclasses.dataclass(frozen=True)
class Example:
    size: int
    names: tuple[str, ...]
    limit: float | None
    extra: tuple[int, ...] | None


def test_settings_are_built_from_the_keys_that_are_fields() -> None:
    block = {"size": 3, "names": ["a", "b"], "limit": None, "extra": [1], "other": "ignored"}
    built = settings_from(Example, block)
    assert built == Example(3, ("a", "b"), None, (1,))
    hash(built)  # lists became tuples: a frozen settings object stays hashable
    assert settings_from(Example, block, size=4).size == 4  # given values take precedence
    assert settings_from(Example, {"names": []}, size=1, limit=0.5, extra=None).limit == 0.5


def test_a_missing_key_is_named_with_its_place_in_the_config() -> None:
    with pytest.raises(StoryflowError, match=r"Example: config a\.b has no 'limit', 'extra'"):
        settings_from(Example, {"size": 1, "names": []}, where="a.b")
    with pytest.raises(TypeError, match="needs a dataclass"):
        settings_from(dict, {})  # type: ignore[type-var]


@pytest.mark.parametrize("cls", SETTINGS_CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_settings_classes_have_no_defaults_of_their_own(cls: type) -> None:
    with_default = [
        f.name
        for f in dataclasses.fields(cls)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    ]
    assert not with_default, f"{cls.__name__}: defaults belong in the config schema"


def test_every_settings_class_builds_from_the_default_config() -> None:
    """The shipped config, validated: each settings object builds from its blocks as the rules
    pass them, with the schema's values."""
    import yaml

    config = schema_defaults(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))
    tension, holes, fei = config["tension"], config["plot_holes"], config["fabula_entropy"]
    stats = config["stats"]
    assert CutSettings.from_config(tension["cuts"]).max_pct == tension["cuts"]["max_pct"]
    assert CurveSettings.from_config(tension["curves"]).angles == tuple(tension["curves"]["angles"])
    # every interval reads the one stats block, under its names, through the plan
    intervals = bootstrap.Statistics.from_params(plan.tension.intervals(config))
    assert (intervals.resamples, intervals.seed) == (stats["resamples"], stats["seed"])
    assert intervals.min_group_size == stats["min_group_size"] == 5
    tension_checks = tension_validity.CheckSettings.from_params(plan.tension.check_settings(config))
    assert (tension_checks.confidence, tension_checks.resamples) == (0.95, stats["resamples"])
    nll = NllSettings.from_config(config["nll"], threads=2)
    assert (nll.n_batch, nll.n_seq, nll.n_threads) == (512, 1, 2)  # CPU defaults for null
    specs = [ModelSpec.from_config(entry) for entry in config["models"]]
    assert {s.prompt for s in specs} <= {"chat", "plain"}
    assert NliSettings.from_config({"nli": holes["nli"], "min_sentences": 6}).min_sentences == 6
    closed = DetectorSettings.from_config(
        {"detection": holes["detection"], "prompts": holes["prompts"]}
    )
    assert closed.format == "closed" and closed.reasoning_tokens is None  # the paper format's
    maker = MakerSettings.from_params(holes["model_maker"], seed=1, min_sentences=6)
    assert maker.prompts == holes["model_maker"]["prompts"]
    detector_checks = plan.plot_holes.settings(config)["checks"]
    assert validation.CheckSettings.from_params(detector_checks).resamples == stats["resamples"]
    assert plan.plot_holes.settings(config)["scoring"]["resamples"] == stats["resamples"]
    statistics = bootstrap.Statistics.from_params(plan.fabula_entropy.statistics(config))
    assert (statistics.resamples, statistics.seed) == (stats["resamples"], stats["seed"])
    reading = {k: fei[k] for k in ("variants", "labels", "calibration", "min_mass", "n_ctx")}
    assert ReaderSettings.from_params(reading).variants == tuple(fei["variants"])
    items = {**fei, "kinds": ["etc"], "ewc_k": fei["ewc_k"]}
    assert ItemSettings.from_params(items).ewc_k == tuple(fei["ewc_k"])
    books = config["books"]
    passages = PassageSettings.from_config(books["passages"], books["pov"], 7)
    assert passages.pov_genres == tuple(books["pov"]["genres"]) and passages.seed == 7


def test_a_setting_block_from_an_unvalidated_config_is_refused() -> None:
    with pytest.raises(StoryflowError, match=r"config tension\.curves has no"):
        CurveSettings.from_config({"late_pct": 0.8})
    assert CurveSettings.from_config(defaults("tension", "curves")).min_cuts == 3
