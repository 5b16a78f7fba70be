"""Plot holes (docs/plot_holes.md): corpora, detectors, baselines, makers, the benchmark and
the validation pool, and the result paths."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import storyflow.plan.roles as roles
from storyflow.corpora import corpus_kind
from storyflow.errors import StoryflowError
from storyflow.plan.layout import Layout, each_corpus, fill
from storyflow.plan.statistics import settings as shared_statistics

#: ``results/<corpus>/plot_holes/``; the validation pool and the detectors' verdicts in
#: ``results/plot_holes/``
OUT = Layout("plot_holes")

#: The models it uses: detectors of plot holes, the surprisal baseline's scorers, the paper's
#: maker of flawed stories (one model) and the NLI baseline's classifiers.
DETECTOR_ROLE = roles.Role("plot_holes.detector", ("plot_holes", "detectors"))
SURPRISAL_ROLE = roles.Role(
    "plot_holes.surprisal", ("plot_holes", "surprisal_models"), scores_text=True
)
MAKER_ROLE = roles.Role("plot_holes.maker", ("plot_holes", "model_maker", "model"))
NLI_ROLE = roles.Role("plot_holes.nli", ("plot_holes", "nli", "models"))
ROLES = (DETECTOR_ROLE, SURPRISAL_ROLE, MAKER_ROLE, NLI_ROLE)

# --- the files, each named once (wildcards: {corpus}, {maker}, {model})
#: A maker's story pairs (original and flawed) and the stories it skipped.
MADE = OUT("made/{maker}.parquet")
SKIPPED = OUT.table("skipped/{maker}.csv")
#: The controlled maker's coverage per story type.
COVERAGE = OUT.table("coverage.csv")
#: The model maker's attempts and the review sheet its stories wait in.
MAKER_ATTEMPTS = OUT("maker_attempts.parquet")
REVIEW_SHEET = OUT.table("review_sheet.csv")
#: A detector's answers, the NLI baseline's and the surprisal baseline's.
ANSWERS = OUT("answers/{model}.parquet")
NLI = OUT("nli/{model}.parquet")
SURPRISAL = OUT("surprisal/{model}.parquet")
#: CEEval-Full per detector, the surprisal contrasts, every answer scored, the story measures and
#: the versions left out.
SCORES = OUT.table("scores.csv")
SURPRISAL_CONTRASTS = OUT.table("surprisal_contrasts.csv")
SCORED_ANSWERS = OUT("answers.parquet")
STORY_MEASURES = OUT("story_measures.parquet")
LEFT_OUT = OUT.table("left_out.csv")
#: HANNA's human-vs-LLM detection rates.
DETECTION_RATES = OUT.table("detection_rates.csv")
CEEVAL_FIGURE = OUT.figure("ceeval")
CEEVAL_BY_LENGTH_FIGURE = OUT.figure("ceeval_by_length")

#: Corpora the plot-hole stage can read: their stories and sentences tables.
READABLE_CORPORA = ("hippocorpus", "hanna", "books", "rocstories")


def corpora(config: Mapping[str, Any]) -> list[str]:
    """``plot_holes.corpora``, each one whose stories table the workflow makes ([] when the
    stage is off)."""
    if not enabled(config):
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


def maker_job(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """What the model maker's run on ``corpus`` depends on (rule ``make_model_plot_holes``'s
    params; :class:`storyflow.measures.plot_holes.llm_maker.MakerJob`): ``plot_holes.model_maker``
    without its ``model`` and ``verdicts``, the stage's seed, story limits and the story types
    it may edit (:func:`edited_story_types`)."""
    block = config["plot_holes"]
    return {
        "maker": {k: v for k, v in block["model_maker"].items() if k not in ("model", "verdicts")},
        "seed": block["seed"],
        "min_sentences": block["min_sentences"],
        "max_words": block["max_words"],
        "story_types": edited_story_types(config, corpus),
    }


def detectors(config: Mapping[str, Any]) -> list[str]:
    """The detector models (``plot_holes.detectors``; null = the role plot_holes.detector)."""
    if not enabled(config):
        return []
    return DETECTOR_ROLE.models(config)


def surprisal_models(config: Mapping[str, Any]) -> list[str]:
    """The surprisal baseline's models (``plot_holes.surprisal_models``; null = the role
    plot_holes.surprisal); a served one needs its tokenizer (plan.roles.role_models)."""
    if not enabled(config):
        return []
    return SURPRISAL_ROLE.models(config)


def maker_model(config: Mapping[str, Any]) -> str | None:
    """The paper's maker (``plot_holes.model_maker.model``; null = the model with the role
    plot_holes.maker), or None: the controlled maker only."""
    if not enabled(config):
        return None
    chosen = MAKER_ROLE.models(config)
    if len(chosen) > 1:
        raise StoryflowError(
            f"config: models {', '.join(chosen)} all have the role {MAKER_ROLE.name}; give it "
            f"to one model, or name one in {MAKER_ROLE.setting}"
        )
    return chosen[0] if chosen else None


def makers(config: Mapping[str, Any]) -> list[str]:
    """``controlled``, plus ``model`` when a model makes plot holes (:func:`maker_model`); []
    when the stage is off."""
    if not enabled(config):
        return []
    return ["controlled"] if maker_model(config) is None else ["controlled", "model"]


#: The published benchmark's results folder: ``results/flawedfictions/plot_holes/``.
BENCHMARK = "flawedfictions"
#: The benchmark's stories, read like a maker's pairs.
BENCHMARK_MADE = fill(MADE, corpus=BENCHMARK, maker=BENCHMARK)


def benchmark(config: Mapping[str, Any]) -> str | None:
    """``plot_holes.benchmark``: the FlawedFictions file the detectors are run on (None: none);
    its results go to ``results/flawedfictions/plot_holes/``, so no corpus may bear that name."""
    path = config["plot_holes"]["benchmark"]
    if path is None or not enabled(config):
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
    if not enabled(config):
        return []
    return NLI_ROLE.models(config)


def sampling(config: Mapping[str, Any]) -> dict[str, Any]:
    """How the detectors answer: ``plot_holes.detection``'s ``format`` (closed questions or the
    paper's reasoned answer) and ``temperature``."""
    detection = config["plot_holes"]["detection"]
    return {k: detection[k] for k in ("format", "temperature")}


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
#: The detectors' validation pool: controlled pairs of HIPPOCORPUS stories outside the sample
#: (docs/plot_holes.md), its coverage and skipped stories, and every detector's and baseline's
#: answers on it.
VALIDATION = Layout(f"{OUT.name}/validation")
VALIDATION_MADE = VALIDATION.shared("made.parquet")
VALIDATION_COVERAGE = VALIDATION.shared_table("coverage.csv")
VALIDATION_SKIPPED = VALIDATION.shared_table("skipped.csv")
VALIDATION_ANSWERS = VALIDATION.shared("answers/{model}.parquet")
VALIDATION_NLI = VALIDATION.shared("nli/{model}.parquet")
VALIDATION_SURPRISAL = VALIDATION.shared("surprisal/{model}.parquet")


def enabled(config: Mapping[str, Any]) -> bool:
    return bool(config["plot_holes"]["enabled"])


def settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the plot-hole jobs depend on, each under the name its rules' params use: the
    makers' seed, story limits and edited story types are per corpus (:func:`edited_story_types`);
    here the validation pool's settings, the NLI baseline's, the scoring's and the checks'."""
    block = config["plot_holes"]
    validation = block["validation"]
    detector = config["validity"]["detector"]
    return {
        "seed": block["seed"],
        "min_sentences": block["min_sentences"],
        "max_words": block["max_words"],
        "validation": {
            "pairs": pool_pairs(config),
            "max_words": validation["max_words"],
            "seed": validation["seed"],
            "classes": validation["classes"],
        },
        "nli": {"nli": block["nli"], "min_sentences": block["min_sentences"]},
        "surprisal_n_ctx": block["detection"]["n_ctx"],
        "surprisal_z": block["detection"]["surprisal_z"],
        "min_annotators": block["model_maker"]["min_annotators"],
        "verdicts": [block["model_maker"]["verdicts"]] if block["model_maker"]["verdicts"] else [],
        "scoring": {
            "seed": block["seed"],
            **shared_statistics(config, "confidence", "resamples"),
            "surprisal_z": block["detection"]["surprisal_z"],
            "unparseable": block["detection"]["unparseable"],
        },
        "benchmark_scoring": {
            "seed": block["seed"],
            **shared_statistics(config, "confidence", "resamples"),
            "unparseable": block["detection"]["unparseable"],
        },
        "checks": {
            "min_auroc": detector["min_auroc"],
            "min_ceeval_gain": detector["min_ceeval_gain"],
            "min_pairs": detector["min_pairs"],
            **shared_statistics(config, "confidence", "resamples", "seed"),
            "classes": validation["classes"],
        },
        "human_group": block["human_group"],
    }


def check_sources(config: Mapping[str, Any]) -> list[tuple[str, str, dict[tuple[str, str], str]]]:
    """(source, made-story file, {(role, model): file}) of the detectors' validity check: the
    validation pool (when it has pairs) and every plot-hole corpus's controlled pairs."""
    sources = []
    if pool_pairs(config):
        validation = (VALIDATION_ANSWERS, VALIDATION_NLI, VALIDATION_SURPRISAL)
        sources.append(("validation", VALIDATION_MADE, *validation))
    sources += [
        (
            c,
            fill(MADE, corpus=c, maker="controlled"),
            fill(ANSWERS, corpus=c),
            fill(NLI, corpus=c),
            fill(SURPRISAL, corpus=c),
        )
        for c in corpora(config)
    ]
    out = []
    for source, made, answers, nli, surprisal in sources:
        files = {("detector", m): fill(answers, model=m) for m in detectors(config)}
        files.update({("nli", m): fill(nli, model=m) for m in nli_models(config)})
        files.update({("surprisal", m): fill(surprisal, model=m) for m in surprisal_models(config)})
        out.append((source, made, files))
    return out


def validity_tables(config: Mapping[str, Any]) -> list[str]:
    """The detectors' verdicts, one table for every source (none when the stage is off)."""
    return [VALIDITY] if corpora(config) else []


def cost_settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per corpus, what its detection, NLI pairs and model-made stories will cost depends on:
    the detectors, NLI models and maker, and the stage's settings (:mod:`storyflow.estimate`)."""
    if not enabled(config):
        return {}
    block = config["plot_holes"]
    models = {
        "detectors": detectors(config),
        "nli": nli_models(config),
        "maker": maker_model(config),
    }
    settings = {
        "min_sentences": block["min_sentences"],
        "max_words": block["max_words"],
        "detection": block["detection"],
        "nli": {"pairs": block["nli"]["pairs"]},
        "model_maker": {k: v for k, v in block["model_maker"].items() if k != "prompts"},
    }
    return {corpus: {"block": settings, "models": models} for corpus in corpora(config)}


def final_outputs(config: Mapping[str, Any]) -> list[str]:
    """The stage's final tables and figures (rule all); [] when it is off."""
    chosen = corpora(config)
    if not chosen:
        return []
    outputs = each_corpus(chosen, SCORES, COVERAGE, LEFT_OUT, STORY_MEASURES, CEEVAL_FIGURE.png)
    outputs.append(VALIDITY)
    if "model" in makers(config):
        outputs += each_corpus(chosen, REVIEW_SHEET)
    if "hanna" in chosen:
        outputs.append(fill(DETECTION_RATES, corpus="hanna"))
    if benchmark(config):
        outputs.append(fill(SCORES, corpus=BENCHMARK))
    return outputs


# --- the paper it replicates (FlawedFictions: storyflow.replication.papers.FLAWED_FICTIONS)


def paper_corpus(config: Mapping[str, Any]) -> bool:
    """Whether it runs on the benchmark or on HANNA."""
    return benchmark(config) is not None or "hanna" in corpora(config)


def paper_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The files FlawedFictions' comparison reads: the benchmark's scores, HANNA's rates."""
    inputs = {}
    if benchmark(config):
        inputs["benchmark_scores"] = [fill(SCORES, corpus=BENCHMARK)]
    if "hanna" in corpora(config):
        inputs["hanna_rates"] = [fill(DETECTION_RATES, corpus="hanna")]
    return inputs


def paper_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """How the detection was sampled (:func:`sampling`)."""
    return {"detection": sampling(config)}
