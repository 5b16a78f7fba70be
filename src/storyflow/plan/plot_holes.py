"""Plot holes (docs/plot_holes.md): corpora, detectors, baselines, makers, the benchmark and
the validation pool, and the result paths."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import storyflow.plan.roles as roles
from storyflow.corpora import corpus_kind
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout

#: ``results/<corpus>/plot_holes/``; the validation pool and the detectors' verdicts in
#: ``results/plot_holes/``
OUT = Layout("plot_holes")

#: Corpora the plot-hole stage can read: their stories and sentences tables.
READABLE_CORPORA = ("hippocorpus", "hanna", "books", "rocstories")


def corpora(config: Mapping[str, Any]) -> list[str]:
    """``plot_holes.corpora``, each one whose stories table the workflow makes ([] when the
    stage is off)."""
    if not config["plot_holes"]["enabled"]:
        return []
    known = [*READABLE_CORPORA, *config["corpora"]]
    chosen = list(config["plot_holes"]["corpora"])
    for corpus in chosen:
        if corpus not in known:
            raise StoryflowError(
                f"config: plot_holes.corpora names {corpus!r}; known corpora: {', '.join(known)}"
            )
        if corpus == "books" and not config["books"]["enabled"]:
            raise StoryflowError(
                "config: plot_holes.corpora names books but books.enabled is false: enable the "
                "books or remove them from plot_holes.corpora"
            )
    return chosen


#: Built-in corpora whose every story is human-written: HIPPOCORPUS's diary stories, the book
#: passages, ROCStories' crowd-written stories. HANNA holds six LLMs' stories beside the human
#: one; a corpus of your own may hold either.
HUMAN_WRITTEN = ("hippocorpus", "books", "rocstories")


def edited_story_types(config: Mapping[str, Any], corpus: str) -> list[str] | None:
    """The story types the makers may edit in ``corpus`` (None: every story).

    ``plot_holes.originals: all`` edits every story. ``human`` (the paper: originals are
    human-written, `flawed_fictions.txt` l. 96) edits every story of a corpus in
    :data:`HUMAN_WRITTEN` and, in any other corpus (HANNA, a corpus of your own), only the
    stories whose story_type is ``plot_holes.human_group``. The stories not edited are still
    shown to the detectors unmodified (their P(error), the HANNA human-vs-LLM rates)."""
    block = config["plot_holes"]
    if block["originals"] == "all":
        return None
    if corpus_kind(config, corpus).kind in HUMAN_WRITTEN:
        return None
    return [str(block["human_group"])]


def detectors(config: Mapping[str, Any]) -> list[str]:
    """The detector models (``plot_holes.detectors``; null = the role plot_holes.detector)."""
    if not config["plot_holes"]["enabled"]:
        return []
    names = config["plot_holes"]["detectors"]
    return roles.role_models(config, "plot_holes.detectors", names, "plot_holes.detector")


def surprisal_models(config: Mapping[str, Any]) -> list[str]:
    """The surprisal baseline's models (``plot_holes.surprisal_models``; null = the role
    plot_holes.surprisal), local weights only."""
    if not config["plot_holes"]["enabled"]:
        return []
    names = config["plot_holes"]["surprisal_models"]
    return roles.role_models(config, "plot_holes.surprisal_models", names, "plot_holes.surprisal")


def maker_model(config: Mapping[str, Any]) -> str | None:
    """The paper's maker (``plot_holes.model_maker.model``; null = the model with the role
    plot_holes.maker), or None: the controlled maker only."""
    if not config["plot_holes"]["enabled"]:
        return None
    name = config["plot_holes"]["model_maker"]["model"]
    chosen = roles.role_models(
        config, "plot_holes.model_maker.model", None if name is None else [name], "plot_holes.maker"
    )
    if len(chosen) > 1:
        raise StoryflowError(
            f"config: models {', '.join(chosen)} all have the role plot_holes.maker; give it to "
            "one model, or name one in plot_holes.model_maker.model"
        )
    return chosen[0] if chosen else None


def makers(config: Mapping[str, Any]) -> list[str]:
    """``controlled``, plus ``model`` when a model makes plot holes (:func:`maker_model`); []
    when the stage is off."""
    if not config["plot_holes"]["enabled"]:
        return []
    return ["controlled"] if maker_model(config) is None else ["controlled", "model"]


BENCHMARK = "flawedfictions"


def benchmark(config: Mapping[str, Any]) -> str | None:
    """``plot_holes.benchmark``: the FlawedFictions file the detectors are run on (None: none);
    its results go to ``results/flawedfictions/plot_holes/``, so no corpus may bear that name."""
    path = config["plot_holes"]["benchmark"]
    if path is None or not config["plot_holes"]["enabled"]:
        return None
    if not Path(path).is_file():
        raise StoryflowError(
            f"config: plot_holes.benchmark names {path}, which is not a file; give the path of a "
            "FlawedFictions file (JSON lines, JSON or CSV; docs/plot_holes.md) or null"
        )
    if BENCHMARK in config["plot_holes"]["corpora"]:
        raise StoryflowError(
            f"config: plot_holes.corpora names {BENCHMARK!r}, the name of the "
            "benchmark's results; rename the corpus"
        )
    return str(path)


def detector_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the detector jobs read: the params of detect_plot_holes. Only the keys of the
    configured answer format (``detection.format``) are there (closed: the classify and localize
    prompts, the localization's ``max_tokens``; paper: the detect prompt, ``reasoning_tokens``,
    ``temperature`` and ``plot_holes.seed``, which seeds its sampled answers), so a scoring-only
    key (``surprisal_z``, ``unparseable``) or the other format's prompt does not ask the models
    again."""
    block = config["plot_holes"]
    detection = block["detection"]
    kept = DETECTION_KEYS[detection["format"]]
    chosen = {k: detection[k] for k in ("format", "threshold", "n_ctx", *kept["detection"])}
    if detection["format"] == "paper":
        chosen["seed"] = block["seed"]
    return {"prompts": {k: block["prompts"][k] for k in kept["prompts"]}, "detection": chosen}


#: The prompts and detection keys each detector answer format reads.
DETECTION_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "closed": {"prompts": ("classify", "localize"), "detection": ("max_tokens",)},
    "paper": {"prompts": ("detect",), "detection": ("reasoning_tokens", "temperature")},
}


def nli_models(config: Mapping[str, Any]) -> list[str]:
    """The NLI baseline's models (``plot_holes.nli.models``; null = the role plot_holes.nli;
    [] = no NLI baseline)."""
    if not config["plot_holes"]["enabled"]:
        return []
    names = config["plot_holes"]["nli"]["models"]
    return roles.role_models(config, "plot_holes.nli.models", names, "plot_holes.nli")


def pool_pairs(config: Mapping[str, Any]) -> int:
    """Pairs of the detectors' validation pool (``plot_holes.validation.pairs``; null = the
    pairs the check needs, ``validity.detector.min_pairs``; 0 = no pool); 0 when the stage is
    off."""
    block = config["plot_holes"]
    if not block["enabled"]:
        return 0
    pairs = block["validation"]["pairs"]
    return int(config["validity"]["detector"]["min_pairs"] if pairs is None else pairs)


#: The detectors' verdicts over every source (:data:`storyflow.tables.VALIDITY`).
VALIDITY = OUT.shared_table("validity.csv")
#: The detectors' validation pool: controlled pairs from ROCStories (docs/plot_holes.md).
VALIDATION = OUT.shared("validation")


def check_sources(config: Mapping[str, Any]) -> list[tuple[str, str, dict[tuple[str, str], str]]]:
    """(source, made-story file, {(role, model): file}) of the detectors' validity check: the
    validation pool (when it has pairs) and every plot-hole corpus's controlled pairs."""
    folders = [("validation", VALIDATION)] if pool_pairs(config) else []
    folders += [(c, OUT.of(c)) for c in corpora(config)]
    out = []
    for source, folder in folders:
        made = (
            f"{folder}/made.parquet"
            if source == "validation"
            else f"{folder}/made/controlled.parquet"
        )
        files = {("detector", m): f"{folder}/answers/{m}.parquet" for m in detectors(config)}
        files.update({("nli", m): f"{folder}/nli/{m}.parquet" for m in nli_models(config)})
        files.update(
            {("surprisal", m): f"{folder}/surprisal/{m}.parquet" for m in surprisal_models(config)}
        )
        out.append((source, made, files))
    return out


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables and figures (rule all); [] when it is off."""
    chosen = corpora(config)
    if not chosen:
        return []
    outputs = [
        OUT.of(c, *parts)
        for c in chosen
        for parts in (
            ("tables", "scores.csv"),
            ("tables", "coverage.csv"),
            ("tables", "left_out.csv"),
            ("story_measures.parquet",),
            ("figures", "ceeval.png"),
        )
    ]
    outputs.append(VALIDITY)
    if "model" in makers(config):
        outputs += [OUT.of(c, "tables", "review_sheet.csv") for c in chosen]
    if "hanna" in chosen:
        outputs.append(OUT.of("hanna", "tables", "detection_rates.csv"))
    if benchmark(config):
        outputs.append(OUT.of(BENCHMARK, "tables", "scores.csv"))
    return outputs
