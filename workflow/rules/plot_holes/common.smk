# Plot holes: the config lookups and input functions of its rules (the other files of
# workflow/rules/plot_holes/), kept apart from the rules as Snakemake's linter asks; file names,
# models and settings come from storyflow.plan.plot_holes.
# each list is [] (the maker and benchmark None) when the stage is off
PLOT_HOLES_CORPORA = exit_on_config_error(plan.plot_holes.corpora, config)
PLOT_HOLES_DETECTORS = exit_on_config_error(plan.plot_holes.detectors, config)
PLOT_HOLES_SURPRISAL_MODELS = exit_on_config_error(
    plan.plot_holes.surprisal_models, config
)
PLOT_HOLES_MAKERS = exit_on_config_error(plan.plot_holes.makers, config)
PLOT_HOLES_MAKER_MODEL = exit_on_config_error(plan.plot_holes.maker_model, config)
PLOT_HOLES_BENCHMARK = exit_on_config_error(plan.plot_holes.benchmark, config)
PLOT_HOLES_NLI_MODELS = exit_on_config_error(plan.plot_holes.nli_models, config)
PLOT_HOLES_DETECTION = plan.plot_holes.detector_settings(config)
PLOT_HOLES_SETTINGS = plan.plot_holes.settings(config)
PLOT_HOLES_CHECK_SOURCES = exit_on_config_error(plan.plot_holes.check_sources, config)


def plot_holes_made(wildcards):
    return expand(
        plan.plot_holes.MADE, corpus=wildcards.corpus, maker=PLOT_HOLES_MAKERS
    )


def plot_holes_answers(wildcards):
    return expand(
        plan.plot_holes.ANSWERS, corpus=wildcards.corpus, model=PLOT_HOLES_DETECTORS
    )


def plot_holes_surprisal(wildcards):
    return expand(
        plan.plot_holes.SURPRISAL,
        corpus=wildcards.corpus,
        model=PLOT_HOLES_SURPRISAL_MODELS,
    )


def plot_holes_nli(wildcards):
    return expand(
        plan.plot_holes.NLI, corpus=wildcards.corpus, model=PLOT_HOLES_NLI_MODELS
    )


def plot_holes_benchmark_file(wildcards):
    return [PLOT_HOLES_BENCHMARK] if PLOT_HOLES_BENCHMARK else []


def plot_holes_benchmark_answers(wildcards):
    return expand(
        plan.plot_holes.ANSWERS,
        corpus=plan.plot_holes.BENCHMARK,
        model=PLOT_HOLES_DETECTORS,
    )


def plot_holes_benchmark_nli(wildcards):
    return expand(
        plan.plot_holes.NLI,
        corpus=plan.plot_holes.BENCHMARK,
        model=PLOT_HOLES_NLI_MODELS,
    )


def plot_holes_maker_weights(wildcards):
    return weights_of(PLOT_HOLES_MAKER_MODEL)


def plot_holes_maker_model(wildcards):
    return MODEL_SPECS[PLOT_HOLES_MAKER_MODEL].scoring_settings()


def plot_holes_maker_job(wildcards):
    return plan.plot_holes.maker_job(config, wildcards.corpus)


def plot_holes_edited_story_types(wildcards):
    return plan.plot_holes.edited_story_types(config, wildcards.corpus)


def plot_holes_check_made(wildcards):
    return [made for _, made, _ in PLOT_HOLES_CHECK_SOURCES]


def plot_holes_check_files(wildcards):
    return [f for _, _, files in PLOT_HOLES_CHECK_SOURCES for f in files.values()]


def plot_holes_check_labels():
    """The labels of plot_holes_check_made and plot_holes_check_files, in their order."""
    sources = PLOT_HOLES_CHECK_SOURCES
    return {
        "made_sources": [source for source, _, _ in sources],
        "file_labels": [
            [source, role, model]
            for source, _, files in sources
            for role, model in files
        ],
    }


def plot_holes_maker_threads(wildcards):
    return plan.models.threads(MODEL_SPECS.get(PLOT_HOLES_MAKER_MODEL))


def plot_holes_maker_mem_mb(wildcards, input, attempt):
    weights = getattr(input, "weights", None)
    return plan.models.mem_mb(MODEL_SPECS.get(PLOT_HOLES_MAKER_MODEL), weights, attempt)


def plot_holes_maker_gpus(wildcards):
    return plan.models.gpus(MODEL_SPECS.get(PLOT_HOLES_MAKER_MODEL))
