# Plot holes: the config lookups and input functions of its rules (workflow/rules/plot_holes.smk
# and the files it includes), kept apart from the rules as Snakemake's linter asks.
PLOT_HOLES_OUT = plan.plot_holes.OUT
PH = config["plot_holes"]
# each list is [] (the maker and benchmark None) when the stage is off
PH_CORPORA = checked(plan.plot_holes.corpora, config)
PH_DETECTORS = checked(plan.plot_holes.detectors, config)
PH_SURPRISAL = checked(plan.plot_holes.surprisal_models, config)
PH_MAKERS = checked(plan.plot_holes.makers, config)
PH_MAKER_MODEL = checked(plan.plot_holes.maker_model, config)
PH_BENCHMARK = checked(plan.plot_holes.benchmark, config)
PH_DETECTION = plan.plot_holes.detector_settings(config)
PH_NLI = checked(plan.plot_holes.nli_models, config)
PH_POOL_PAIRS = plan.plot_holes.pool_pairs(config)
PH_VALIDITY = plan.plot_holes.VALIDITY
PH_CHECK_SOURCES = checked(plan.plot_holes.check_sources, config)
PH_MIN_ANNOTATORS = PH["model_maker"]["min_annotators"]


def ph_made(wildcards):
    return expand(
        PLOT_HOLES_OUT("made/{maker}.parquet"),
        corpus=wildcards.corpus,
        maker=PH_MAKERS,
    )


def ph_answers(wildcards):
    return expand(
        PLOT_HOLES_OUT("answers/{model}.parquet"),
        corpus=wildcards.corpus,
        model=PH_DETECTORS,
    )


def ph_surprisal(wildcards):
    return expand(
        PLOT_HOLES_OUT("surprisal/{model}.parquet"),
        corpus=wildcards.corpus,
        model=PH_SURPRISAL,
    )


def ph_nli(wildcards):
    return expand(
        PLOT_HOLES_OUT("nli/{model}.parquet"),
        corpus=wildcards.corpus,
        model=PH_NLI,
    )


def ph_benchmark_file(wildcards):
    return [PH_BENCHMARK] if PH_BENCHMARK else []


def ph_benchmark_answers(wildcards):
    return expand(
        PLOT_HOLES_OUT.of("flawedfictions", "answers/{model}.parquet"),
        model=PH_DETECTORS,
    )


def ph_benchmark_nli(wildcards):
    return expand(
        PLOT_HOLES_OUT.of("flawedfictions", "nli/{model}.parquet"), model=PH_NLI
    )


def ph_maker_weights(wildcards):
    return weights_of(PH_MAKER_MODEL)


def ph_maker_spec(wildcards):
    return MODEL_SPECS[PH_MAKER_MODEL].scoring_settings()


def ph_maker_settings(wildcards):
    return {
        k: v for k, v in PH["model_maker"].items() if k not in ("model", "verdicts")
    }


def ph_edited_story_types(wildcards):
    return plan.plot_holes.edited_story_types(config, wildcards.corpus)


def ph_verdicts(wildcards):
    return [PH["model_maker"]["verdicts"]] if PH["model_maker"]["verdicts"] else []


def ph_check_made(wildcards):
    return [made for _, made, _ in PH_CHECK_SOURCES]


def ph_check_files(wildcards):
    return [f for _, _, files in PH_CHECK_SOURCES for f in files.values()]


def ph_check_params():
    """The labels of ph_check_made and ph_check_files, in their order."""
    sources = PH_CHECK_SOURCES
    return {
        "made_sources": [source for source, _, _ in sources],
        "file_labels": [
            [source, role, model]
            for source, _, files in sources
            for role, model in files
        ],
    }
