"""What the workflow runs, decided from the validated config alone (no data read).

The Snakefile calls these at parse time, so a config mistake they can see stops the run before
the first job, with one message naming the key. They are plain functions of the config mapping,
tested without Snakemake.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from storyflow import corpora
from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)


#: Keys of which a config sets one: (the block holding them, the alternatives).
ALTERNATIVES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("hippocorpus", "sample"), ("fraction", "per_type")),
)


def _block(config: Mapping[str, Any] | None, path: tuple[str, ...]) -> Mapping[str, Any]:
    for key in path:
        config = (config or {}).get(key) if isinstance(config, Mapping) else None
    return config if isinstance(config, Mapping) else {}


def resolve_alternatives(
    config: dict[str, Any], sources: Sequence[Mapping[str, Any] | None]
) -> dict[str, Any]:
    """Let a later config replace an either/or choice of an earlier one.

    Snakemake merges config files key by key, so a user file setting
    ``hippocorpus.sample.fraction`` over the default's ``per_type`` would give both. For each
    group of :data:`ALTERNATIVES`, the last of ``sources`` (config mappings in the order they
    were merged: the Snakefile's config file, then ``--configfile``s, then ``--config``) that
    sets any key of the group decides: the group's other keys are set to None in ``config``
    (changed in place and returned). Two alternatives set in the same source are an error.
    """
    for path, keys in ALTERNATIVES:
        chosen: set[str] = set()
        for source in sources:
            given = {k for k in keys if _block(source, path).get(k) is not None}
            if given:
                chosen = given
        if len(chosen) > 1:
            names = " and ".join(".".join((*path, k)) for k in sorted(chosen))
            raise StoryflowError(
                f"config: {names} are alternatives: set one of them (a later config file "
                "replaces the other)"
            )
        block = _block(config, path)
        if chosen and isinstance(block, dict):
            for key in set(keys) - chosen:
                block[key] = None
    return config


#: Config keys naming models of ``models`` for a role (null: the models with that role).
MODEL_REFERENCES: tuple[tuple[str, ...], ...] = (
    ("tension", "forecasters"),
    ("tension", "judges"),
    ("tension", "pmi", "models"),
    ("fabula_entropy", "readers"),
    ("plot_holes", "detectors"),
    ("plot_holes", "surprisal_models"),
    ("plot_holes", "model_maker", "model"),
    ("plot_holes", "nli", "models"),
)


def resolve_model_references(
    config: dict[str, Any], sources: Sequence[Mapping[str, Any] | None]
) -> list[str]:
    """Let a config file that replaces ``models`` drop the model names of earlier files.

    Snakemake replaces the ``models`` list of an earlier config file but merges the measure
    blocks key by key, so a model list named by the default config (``tension.forecasters:
    [smollm2-135m-instruct]``) would survive into a config whose ``models`` no longer holds that
    model. For each key of :data:`MODEL_REFERENCES` set only by sources before the last one
    that sets ``models``, the key is reset to None (the models with the role, from the new list).
    Returns the keys reset (changed in place).
    """
    last_models = max((i for i, s in enumerate(sources) if s and "models" in s), default=-1)
    reset = []
    for path in MODEL_REFERENCES:
        setters = [i for i, s in enumerate(sources) if path[-1] in _block(s, path[:-1])]
        if setters and max(setters) < last_models:
            block = _block(config, path[:-1])
            if isinstance(block, dict) and block.get(path[-1]) is not None:
                block[path[-1]] = None
                reset.append(".".join(path))
    return reset


def models_with_role(config: Mapping[str, Any], role: str) -> list[str]:
    """The models of ``config['models']`` whose ``roles`` include ``role``, in config order."""
    return [m["name"] for m in config["models"] if role in m.get("roles", ["sequentiality"])]


def role_models(
    config: Mapping[str, Any], key: str, names: Sequence[str] | None, role: str
) -> list[str]:
    """The models named by config key ``key`` (``names``), or, when it is null, the models with
    ``role``; each must be in ``models``, and a served model cannot take a role that scores
    text with local weights (:data:`storyflow.lm.registry.LOCAL_ROLES`)."""
    from storyflow.lm.registry import LOCAL_ROLES

    every = [m["name"] for m in config["models"]]
    chosen = models_with_role(config, role) if names is None else list(names)
    unknown = [n for n in chosen if n not in every]
    if unknown:
        raise StoryflowError(
            f"config: {key} names unknown model(s) {', '.join(unknown)}; the models are "
            f"{', '.join(every)} (or leave {key} null: the models with the role {role})"
        )
    served = {m["name"] for m in config["models"] if "server" in m["source"]}
    if role in LOCAL_ROLES and served & set(chosen):
        raise StoryflowError(
            f"config: {key} names served model(s) {', '.join(sorted(served & set(chosen)))}; "
            f"the role {role} scores text with local weights"
        )
    return chosen


def sequentiality_models(config: Mapping[str, Any]) -> list[str]:
    """The models that score NLLs for sequentiality: those with the role ``sequentiality``."""
    chosen = models_with_role(config, "sequentiality")
    if not chosen:
        raise StoryflowError(
            "config: no model has the role sequentiality (models[].roles), so nothing scores "
            "the NLLs of the sequentiality analysis; add sequentiality to a local model's roles"
        )
    return chosen


def sequentiality_corpora(config: Mapping[str, Any]) -> list[str]:
    """Corpora of the sequentiality analysis: HIPPOCORPUS, books (when on), the user's CSVs."""
    books = ["books"] if config["books"]["enabled"] else []
    return ["hippocorpus", *books, *(config.get("corpora") or {})]


#: NLL settings that change no score: how the work is split, the rate of the time estimate.
NOT_SCORES = ("shards", "tokens_per_second")


def nll_settings(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """The NLL settings that change a corpus's scores (not :data:`NOT_SCORES`).

    Books have no topic: their formulations come from ``books.formulations``.
    """
    settings = {k: v for k, v in config["nll"].items() if k not in NOT_SCORES}
    if corpus == "books":
        settings["formulations"] = config["books"]["formulations"]
    return settings


def contrasts(config: Mapping[str, Any], corpus: str) -> list[Mapping[str, Any]]:
    """The contrasts declared for ``corpus`` (its own block, or its ``corpora:`` entry)."""
    user = config.get("corpora") or {}
    return list(user[corpus]["contrasts"] if corpus in user else config[corpus]["contrasts"])


def contrast_labels(
    config: Mapping[str, Any], corpus: str, groups: Sequence[str] | None = None
) -> dict[str, list[str] | None]:
    """The label columns a contrast of ``corpus`` may filter on, with the values they can take
    (None: any value; known only from the data).

    ``groups``: the genres of the sampled books (books) or the values of a CSV corpus's group
    column; HIPPOCORPUS's story types come from the config.
    """
    if corpus == "hippocorpus":
        return {"story_type": list(config["hippocorpus"]["story_types"])}
    if corpus == "books":
        from storyflow.corpora.books import POV_LABELS, passage_types

        genres = sorted(set(groups or ()))
        pov_genres = config["books"]["pov"]["genres"]
        return {
            "story_type": passage_types(genres, pov_genres),
            "genre": genres,
            "pov": list(POV_LABELS),
            "document_id": None,
        }
    return {"story_type": None if groups is None else sorted(set(groups))}


def check_contrasts(
    config: Mapping[str, Any], corpus: str, groups: Sequence[str] | None = None
) -> None:
    """Stop when a contrast of ``corpus`` names a label column or values that cannot occur.

    Run at parse time, before any job: a typo in a contrast is reported in seconds, not after
    hours of scoring. (A group that exists but happens to be empty in a small sample is not an
    error: the statistics report it as NaN with a warning.)
    """
    labels = contrast_labels(config, corpus, groups)
    for contrast in contrasts(config, corpus):
        for side in ("a", "b"):
            group = contrast[side]
            filters = {"story_type": [group]} if isinstance(group, str) else group
            for column, wanted in filters.items():
                if column not in labels:
                    raise StoryflowError(
                        f"config: contrast {contrast['name']!r} of corpus {corpus!r}: group "
                        f"{side} filters on {column!r}, which its stories do not have; label "
                        f"columns: {', '.join(labels)}"
                    )
                allowed = labels[column]
                values = [wanted] if isinstance(wanted, str) else list(wanted)
                if allowed is not None and not set(values) & set(allowed):
                    raise StoryflowError(
                        f"config: contrast {contrast['name']!r} of corpus {corpus!r}: group "
                        f"{side} asks for {column} {', '.join(map(repr, values))}, which cannot "
                        f"occur; possible values: {', '.join(allowed)}"
                    )


def regression_plan(config: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Regression specifications to fit (``gain_h1`` ...) and those skipped, with the reason."""
    if not config["regression"]["enabled"]:
        return [], {}
    reg, nll = config["regression"], config["nll"]
    if not config["covariates"]["enabled"]:
        raise StoryflowError("config: regression.enabled needs covariates.enabled")
    if reg["formulation"] not in nll["formulations"]:
        raise StoryflowError(
            f"config: regression.formulation {reg['formulation']!r} is not in nll.formulations"
        )
    fitted, skipped = [], {}
    for history in reg["histories"]:
        if int(history) not in config["covariates"]["windows"]:
            raise StoryflowError(
                f"config: regression history {history} needs covariate window {history} "
                "(covariates.windows)"
            )
        for kind in reg["kinds"]:
            if int(history) <= nll["max_history"]:
                fitted.append(f"{kind}_h{history}")
            else:
                skipped[f"{kind}_h{history}"] = (
                    f"history {history} not scored (nll.max_history = {nll['max_history']})"
                )
    if not fitted:
        raise StoryflowError("config: no regression history is scored (see nll.max_history)")
    return fitted, skipped


def narrative_sense_sources(config: Mapping[str, Any]) -> list[str]:
    """Every corpus the narrative-sense stage reads (reference and targets), each one known."""
    ns = config["narrative_sense"]
    sources = sorted(set(ns["reference"]) | set(ns["targets"]))
    for source in sources:
        corpora.corpus_kind(config, source)
    return sources


def narrative_sense_settings(config: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Only the settings that change ``source``'s lemma table (so reruns are precise)."""
    ns = config["narrative_sense"]
    settings: dict[str, Any] = {"kind": corpora.corpus_kind(config, source).kind}
    settings["limit"] = ns["limit"]
    if source == "hippocorpus":
        settings["story_types"] = config["hippocorpus"]["story_types"]
    if source == "books":
        settings["books"] = ns["books_reference"]
        settings["seed"] = ns["seed"]
        settings["columns"] = config["books"]["columns"]
        settings["path_template"] = config["books"]["path_template"]
    if source in (config.get("corpora") or {}):
        settings["columns"] = config["corpora"][source]["columns"]
    return settings


# --------------------------------------------------------------------------- comparison


def story_measure_files(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per corpus, the story-measure tables (:data:`storyflow.tables.STORY_MEASURES`) that the
    enabled measures write for it: ``results/<corpus>/<measure>/story_measures.parquet``."""
    runs: dict[str, list[str]] = {}

    def add(measure: str, corpus_names: Sequence[str]) -> None:
        for corpus in corpus_names:
            runs.setdefault(corpus, []).append(f"results/{corpus}/{measure}/story_measures.parquet")

    add("sequentiality", sequentiality_corpora(config))
    if config["narrative_sense"]["enabled"]:
        add("narrative_sense", config["narrative_sense"]["targets"])
    if config["tension"]["enabled"]:
        add("tension", config["tension"]["corpora"])
    if config["plot_holes"]["enabled"]:
        add("plot_holes", plot_hole_corpora(config))
    if (config.get("fabula_entropy") or {}).get("enabled"):
        add("fabula_entropy", fabula_entropy_corpora(config))
    return runs


def validity_files(config: Mapping[str, Any]) -> list[str]:
    """The validity tables (:data:`storyflow.tables.VALIDITY`) the enabled measures write, in
    measure order; gathered into ``results/validity.csv`` (docs/validity.md)."""
    files: list[str] = []
    if config["tension"]["enabled"]:
        files += [f"results/tension/validity/{m}.csv" for m in tension_plan(config)["forecasters"]]
    if config["fabula_entropy"]["enabled"]:
        files += [
            f"results/{c}/fabula_entropy/validity.csv" for c in fabula_entropy_corpora(config)
        ]
    if config["plot_holes"]["enabled"]:
        files.append("results/plot_holes/validity.csv")
    return files


def comparison_corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora compared across measures: ``comparison.corpora``, or (null) every corpus that
    two or more enabled measures score. A listed corpus that fewer than two measures score is
    an error naming the measures that do."""
    if not config["comparison"]["enabled"]:
        return []
    files = story_measure_files(config)
    chosen = config["comparison"]["corpora"]
    if chosen is None:
        return sorted(corpus for corpus, paths in files.items() if len(paths) >= 2)
    for corpus in chosen:
        have = [Path(p).parent.name for p in files.get(corpus, [])]
        if len(have) < 2:
            raise StoryflowError(
                f"comparison.corpora names {corpus!r}, which "
                f"{'only ' + have[0] + ' scores' if have else 'no enabled measure scores'}: a "
                "comparison needs two measures on the same stories (enable another measure for "
                "it, or remove it from comparison.corpora)"
            )
    return list(chosen)


def comparison_contrasts(config: Mapping[str, Any], corpus: str) -> list[Mapping[str, Any]]:
    """The contrasts ``corpus`` declares (HIPPOCORPUS, books, a CSV corpus); none for HANNA and
    ROCStories, whose contrasts come from their data (storyflow.comparison.separation)."""
    if corpus in ("hanna", "rocstories"):
        return []
    return contrasts(config, corpus)


# --------------------------------------------------------------------------- plot holes

#: Corpora the plot-hole stage can read: their stories and sentences tables.
PLOT_HOLE_CORPORA = ("hippocorpus", "hanna", "books", "rocstories")


def plot_hole_corpora(config: Mapping[str, Any]) -> list[str]:
    """``plot_holes.corpora``, each one whose stories table the workflow makes."""
    known = [*PLOT_HOLE_CORPORA, *(config.get("corpora") or {})]
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


def plot_hole_detectors(config: Mapping[str, Any]) -> list[str]:
    """The detector models (``plot_holes.detectors``; null = the role plot_holes.detector)."""
    names = config["plot_holes"]["detectors"]
    return role_models(config, "plot_holes.detectors", names, "plot_holes.detector")


def plot_hole_surprisal_models(config: Mapping[str, Any]) -> list[str]:
    """The surprisal baseline's models (``plot_holes.surprisal_models``; null = the role
    plot_holes.surprisal), local weights only."""
    names = config["plot_holes"]["surprisal_models"]
    return role_models(config, "plot_holes.surprisal_models", names, "plot_holes.surprisal")


def plot_hole_maker_model(config: Mapping[str, Any]) -> str | None:
    """The paper's maker (``plot_holes.model_maker.model``; null = the model with the role
    plot_holes.maker), or None: the controlled maker only."""
    name = config["plot_holes"]["model_maker"]["model"]
    chosen = role_models(
        config, "plot_holes.model_maker.model", None if name is None else [name], "plot_holes.maker"
    )
    if len(chosen) > 1:
        raise StoryflowError(
            f"config: models {', '.join(chosen)} all have the role plot_holes.maker; give it to "
            "one model, or name one in plot_holes.model_maker.model"
        )
    return chosen[0] if chosen else None


def plot_hole_makers(config: Mapping[str, Any]) -> list[str]:
    """``controlled``, plus ``model`` when a model makes plot holes
    (:func:`plot_hole_maker_model`)."""
    return ["controlled"] if plot_hole_maker_model(config) is None else ["controlled", "model"]


# ---- tension (ending forecasting; docs/tension.md)

TENSION_EMBEDDING_JUDGE = "embedding"


def tension_plan(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The tension stage's corpora, forecasters, judges and PMI models (each list null in the
    config: the models with the role), checked against the model registry and the settings'
    ranges; empty lists when the stage is off."""
    tension = config["tension"]
    if not tension["enabled"]:
        return {"corpora": [], "forecasters": [], "judges": [], "pmi_models": []}
    if isinstance(tension["k"], bool) or not int(tension["k"]) >= 1:
        raise StoryflowError(f"config: tension.k must be an integer >= 1, not {tension['k']!r}")
    if not tension["sampling"]["temperature"] > 0:
        raise StoryflowError(
            "config: tension.sampling.temperature must be > 0, not "
            f"{tension['sampling']['temperature']!r}"
        )
    threshold = tension["embedding"]["threshold"]
    if threshold is not None and not -1 <= threshold <= 1:
        raise StoryflowError(
            f"config: tension.embedding.threshold must be in [-1, 1] or null, not {threshold!r}"
        )
    forecasters = role_models(
        config, "tension.forecasters", tension["forecasters"], "tension.forecaster"
    )
    if not forecasters:
        raise StoryflowError(
            "config: tension is enabled but no model forecasts endings: give a model the role "
            "tension.forecaster (models[].roles) or name one in tension.forecasters"
        )
    named = tension["judges"]
    if named is None:
        judges = [TENSION_EMBEDDING_JUDGE, *models_with_role(config, "tension.judge")]
    else:
        models = [j for j in named if j != TENSION_EMBEDDING_JUDGE]
        role_models(config, "tension.judges", models, "tension.judge")
        judges = list(named)
    for corpus in tension["corpora"]:
        corpora.corpus_kind(config, corpus)
    return {
        "corpora": list(tension["corpora"]),
        "forecasters": forecasters,
        "judges": judges,
        "pmi_models": role_models(
            config, "tension.pmi.models", tension["pmi"]["models"], "tension.pmi"
        ),
    }


def tension_judge_settings(config: Mapping[str, Any], judge: str) -> dict[str, Any]:
    """The settings one judge's verdicts depend on (a rule's ``params``: changing the LLM
    judge's prompt re-runs that judge only, never the sampling)."""
    tension = config["tension"]
    if judge == TENSION_EMBEDDING_JUDGE:
        return {"kind": "embedding", **tension["embedding"]}
    return {"kind": "llm", "model": judge, **tension["llm_judge"]}


def tension_check_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of the tension validity checks (a rule's ``params``;
    :class:`storyflow.measures.tension.validity.CheckSettings`): interval level
    (``stats.confidence``), bootstrap resamples and seed, and the forecaster's and the judge's
    thresholds (``validity.*``); other validity keys re-run nothing here."""
    checks = config["validity"]
    return {
        "confidence": config["stats"]["confidence"],
        "resamples": checks["bootstrap"],
        "seed": checks["seed"],
        "min_pairwise": checks["forecaster"]["min_pairwise"],
        "min_balanced_accuracy": checks["judge"]["min_balanced_accuracy"],
        "min_judge_pairwise": checks["judge"]["min_pairwise"],
    }


def tension_intervals(config: Mapping[str, Any]) -> dict[str, Any]:
    """How the tension group means and contrasts are summarised (a rule's ``params``;
    :class:`storyflow.measures.tension.compare.Intervals`): ``tension.confidence``, the
    bootstrap resamples and seed and ``min_group_size`` of ``validity``."""
    checks = config["validity"]
    return {
        "confidence": config["tension"]["confidence"],
        "resamples": checks["bootstrap"],
        "seed": checks["seed"],
        "min_group_size": checks["min_group_size"],
    }


# ---- fabula entropy


def fabula_entropy_corpora(config: Mapping[str, Any]) -> list[str]:
    """The corpora the fabula-entropy stage reads (``fabula_entropy.corpora``), each known; the
    book passages need ``books.enabled``."""
    names = [entry["name"] for entry in config["fabula_entropy"]["corpora"]]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise StoryflowError(f"config: fabula_entropy.corpora lists {repeated} more than once")
    for name in names:
        corpora.corpus_kind(config, name)
        if name == "books" and not config["books"]["enabled"]:
            raise StoryflowError(
                "config: fabula_entropy.corpora names books, but books.enabled is false; "
                "enable the books or remove books from fabula_entropy.corpora"
            )
    return names


def fabula_entropy_items(config: Mapping[str, Any], corpus: str) -> dict[str, Any]:
    """The settings that change a corpus's passages and questions (rule make_fabula_items):
    the corpus entry's ``kinds``, ``lines`` (null: the whole story) and ``wrong_ending`` over
    the block's defaults, and the block's question, corruption and template settings."""
    block = config["fabula_entropy"]
    entry = next(e for e in block["corpora"] if e["name"] == corpus)
    lines = entry["lines"] if "lines" in entry else block["lines"]
    return {
        "kinds": list(entry.get("kinds") or ["etc"]),
        "lines": None if lines is None else int(lines),
        "wrong_ending": bool(entry.get("wrong_ending", block["wrong_ending"])),
        **{
            key: block[key]
            for key in (
                "questions", "controls", "span", "plot_points", "segment_lines", "templates",
                "retries", "seed",
            )
        },
        "ewc_k": list(block["ewc_k"]),
    }  # fmt: skip


def fabula_entropy_readers(config: Mapping[str, Any]) -> list[str]:
    """The reader models (``fabula_entropy.readers``; null = the role fabula_entropy.reader)."""
    readers = role_models(
        config, "fabula_entropy.readers", config["fabula_entropy"]["readers"],
        "fabula_entropy.reader",
    )  # fmt: skip
    if not readers:
        raise StoryflowError(
            "config: fabula_entropy is enabled but no model reads: give a model the role "
            "fabula_entropy.reader (models[].roles) or name readers in fabula_entropy.readers"
        )
    return readers


def fabula_entropy_reading(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that change every reader's answers (rule answer_fabula_questions)."""
    block = config["fabula_entropy"]
    return {k: block[k] for k in ("variants", "labels", "calibration", "min_mass", "n_ctx")}


PLOT_HOLE_BENCHMARK = "flawedfictions"


def plot_hole_benchmark(config: Mapping[str, Any]) -> str | None:
    """``plot_holes.benchmark``: the FlawedFictions file the detectors are run on (None: none);
    its results go to ``results/flawedfictions/plot_holes/``, so no corpus may bear that name."""
    path = config["plot_holes"]["benchmark"]
    if path is None:
        return None
    if not Path(path).is_file():
        raise StoryflowError(
            f"config: plot_holes.benchmark names {path}, which is not a file; give the path of a "
            "FlawedFictions file (JSON lines, JSON or CSV; docs/plot_holes.md) or null"
        )
    if PLOT_HOLE_BENCHMARK in config["plot_holes"]["corpora"]:
        raise StoryflowError(
            f"config: plot_holes.corpora names {PLOT_HOLE_BENCHMARK!r}, the name of the "
            "benchmark's results; rename the corpus"
        )
    return str(path)


def plot_hole_detector_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the detector jobs read: the params of detect_plot_holes. Only the keys of the
    configured answer format (``detection.format``) are there (closed: the classify and localize
    prompts, the localization's ``max_tokens``; paper: the detect prompt and
    ``reasoning_tokens``), so a scoring-only key (``surprisal_z``, ``unparseable``) or the other
    format's prompt does not ask the models again."""
    block = config["plot_holes"]
    detection = block["detection"]
    kept = DETECTION_KEYS[detection["format"]]
    return {
        "prompts": {k: block["prompts"][k] for k in kept["prompts"]},
        "detection": {
            k: detection[k] for k in ("format", "threshold", "n_ctx", *kept["detection"])
        },
    }


#: The prompts and detection keys each detector answer format reads.
DETECTION_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "closed": {"prompts": ("classify", "localize"), "detection": ("max_tokens",)},
    "paper": {"prompts": ("detect",), "detection": ("reasoning_tokens",)},
}


def plot_hole_nli_models(config: Mapping[str, Any]) -> list[str]:
    """The NLI baseline's models (``plot_holes.nli.models``; null = the role plot_holes.nli;
    [] = no NLI baseline)."""
    names = config["plot_holes"]["nli"]["models"]
    return role_models(config, "plot_holes.nli.models", names, "plot_holes.nli")


def plot_hole_pool_pairs(config: Mapping[str, Any]) -> int:
    """Pairs of the detectors' validation pool (``plot_holes.validation.pairs``; null = the
    pairs the check needs, ``validity.detector.min_pairs``; 0 = no pool); 0 when the stage is
    off."""
    block = config["plot_holes"]
    if not block["enabled"]:
        return 0
    pairs = block["validation"]["pairs"]
    return int(config["validity"]["detector"]["min_pairs"] if pairs is None else pairs)


# ---- what the language-model stages will cost (storyflow.estimate)


def lm_cost_settings(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per corpus, the language-model stages that read it with their models and the settings
    their size depends on: the params of rule estimate_lm_cost (``storyflow.estimate``)."""
    settings: dict[str, dict[str, Any]] = {}
    tension = tension_plan(config)
    for corpus in tension["corpora"]:
        block = {k: config["tension"][k] for k in ("k", "sampling", "cuts")}
        chosen = {k: tension[k] for k in ("forecasters", "judges")}
        settings.setdefault(corpus, {})["tension"] = {"block": block, "plan": chosen}
    fei = config["fabula_entropy"]
    if fei["enabled"]:
        readers = fabula_entropy_readers(config)
        for corpus in fabula_entropy_corpora(config):
            items = fabula_entropy_items(config, corpus)
            # only ROCStories has a wrong ending to swap in
            items["wrong_ending"] = items["wrong_ending"] and corpus == "rocstories"
            settings.setdefault(corpus, {})["fabula_entropy"] = {
                "items": items,
                "readers": readers,
                "variants": len(fei["variants"]),
            }
    holes = config["plot_holes"]
    if holes["enabled"]:
        models = {
            "detectors": plot_hole_detectors(config),
            "nli": plot_hole_nli_models(config),
            "maker": plot_hole_maker_model(config),
        }
        block = {
            "min_sentences": holes["min_sentences"],
            "max_words": holes["max_words"],
            "detection": holes["detection"],
            "nli": {"pairs": holes["nli"]["pairs"]},
            "model_maker": {k: v for k, v in holes["model_maker"].items() if k != "prompts"},
        }
        for corpus in plot_hole_corpora(config):
            settings.setdefault(corpus, {})["plot_holes"] = {"block": block, "models": models}
    return settings
