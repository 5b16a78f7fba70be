# Plot holes: continuity errors made from the corpora's stories, found by the configured models
# and baselines, scored with CEEval-Full (docs/plot_holes.md).


# The detectors' validity check (docs/validity.md): controlled pairs of a validation pool of
# HIPPOCORPUS stories outside the analysed sample, and of every plot-hole corpus, pooled.


rule make_plot_hole_validation:
    input:
        csv=hippocorpus_csv(),
        sample="results/hippocorpus/stories.parquet",
    output:
        made="results/plot_holes/validation/made.parquet",
        coverage=report(
            "results/plot_holes/validation/coverage.csv",
            caption="../report/plot_holes_validation_coverage.rst",
            category="Plot holes",
            subcategory="validity",
        ),
        skipped="results/plot_holes/validation/skipped.csv",
    log:
        "logs/plot_holes/make_plot_hole_validation.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        story_types=config["hippocorpus"]["story_types"],
        pairs=PH_POOL_PAIRS,
        max_words=PH["validation"]["max_words"],
        seed=PH["validation"]["seed"],
        classes=PH["validation"]["classes"],
        min_sentences=PH["min_sentences"],
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/make_plot_hole_validation.py"


rule detect_plot_hole_validation:
    input:
        unpack(model_weights),
        made="results/plot_holes/validation/made.parquet",
    output:
        answers="results/plot_holes/validation/answers/{model}.parquet",
    log:
        "logs/plot_holes/detect_plot_hole_validation/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        settings=PH_DETECTION,
    script:
        "../../scripts/detect_benchmark_plot_holes.py"


rule detect_plot_hole_validation_nli:
    input:
        unpack(model_weights),
        made=["results/plot_holes/validation/made.parquet"],
        verdicts=[],
    output:
        answers="results/plot_holes/validation/nli/{model}.parquet",
    log:
        "logs/plot_holes/detect_plot_hole_validation_nli/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        settings={"nli": PH["nli"], "min_sentences": PH["min_sentences"]},
    script:
        "../../scripts/detect_plot_holes_nli.py"


rule score_plot_hole_validation_surprisal:
    input:
        made="results/plot_holes/validation/made.parquet",
        gguf="resources/models/{model}.gguf",
    output:
        surprisal="results/plot_holes/validation/surprisal/{model}.parquet",
    log:
        "logs/plot_holes/score_plot_hole_validation_surprisal/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        n_ctx=PH["detection"]["n_ctx"],
    script:
        "../../scripts/score_plot_hole_surprisal.py"


rule check_plot_hole_detectors:
    input:
        made=ph_check_made,
        files=ph_check_files,
    output:
        validity=report(
            "results/plot_holes/validity.csv",
            caption="../report/plot_holes_validity.rst",
            category="Plot holes",
            subcategory="validity",
        ),
    log:
        "logs/plot_holes/check_plot_hole_detectors.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        made_sources=ph_check_params()["made_sources"],
        file_labels=ph_check_params()["file_labels"],
        settings={
            "min_auroc": config["validity"]["detector"]["min_auroc"],
            "min_ceeval_gain": config["validity"]["detector"]["min_ceeval_gain"],
            "min_pairs": config["validity"]["detector"]["min_pairs"],
            "confidence": config["stats"]["confidence"],
            "bootstrap": config["validity"]["bootstrap"],
            "seed": config["validity"]["seed"],
            "classes": PH["validation"]["classes"],
        },
        surprisal_z=PH["detection"]["surprisal_z"],
    script:
        "../../scripts/check_plot_hole_detectors.py"


rule make_controlled_plot_holes:
    input:
        stories="results/{corpus}/stories.parquet",
        sentences="results/{corpus}/sentences.parquet",
    output:
        made="results/{corpus}/plot_holes/made/controlled.parquet",
        skipped="results/{corpus}/plot_holes/skipped/controlled.csv",
        coverage=report(
            "results/{corpus}/plot_holes/coverage.csv",
            caption="../report/plot_holes_coverage.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/plot_holes/make_controlled_plot_holes.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        seed=PH["seed"],
        min_sentences=PH["min_sentences"],
        max_words=PH["max_words"],
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/make_controlled_plot_holes.py"


rule make_model_plot_holes:
    input:
        unpack(ph_maker_weights),
        stories="results/{corpus}/stories.parquet",
        sentences="results/{corpus}/sentences.parquet",
    output:
        made="results/{corpus}/plot_holes/made/model.parquet",
        skipped="results/{corpus}/plot_holes/skipped/model.csv",
        attempts="results/{corpus}/plot_holes/maker_attempts.parquet",
        sheet="results/{corpus}/plot_holes/review_sheet.csv",
    log:
        "logs/{corpus}/plot_holes/make_model_plot_holes.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=ph_maker_spec,
        settings=ph_maker_settings,
        seed=PH["seed"],
        min_sentences=PH["min_sentences"],
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/make_model_plot_holes.py"


rule detect_plot_holes:
    input:
        unpack(model_weights),
        made=ph_made,
        verdicts=ph_verdicts,
        stories="results/{corpus}/stories.parquet",
        sentences="results/{corpus}/sentences.parquet",
    output:
        answers="results/{corpus}/plot_holes/answers/{model}.parquet",
    log:
        "logs/{corpus}/plot_holes/detect_plot_holes/{model}.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        settings=PH_DETECTION,
    script:
        "../../scripts/detect_plot_holes.py"


rule detect_plot_holes_nli:
    input:
        unpack(model_weights),
        made=ph_made,
        verdicts=ph_verdicts,
    output:
        answers="results/{corpus}/plot_holes/nli/{model}.parquet",
    log:
        "logs/{corpus}/plot_holes/detect_plot_holes_nli/{model}.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        settings={"nli": PH["nli"], "min_sentences": PH["min_sentences"]},
    script:
        "../../scripts/detect_plot_holes_nli.py"


rule score_plot_hole_surprisal:
    input:
        made="results/{corpus}/plot_holes/made/controlled.parquet",
        gguf="resources/models/{model}.gguf",
    output:
        surprisal="results/{corpus}/plot_holes/surprisal/{model}.parquet",
    log:
        "logs/{corpus}/plot_holes/score_plot_hole_surprisal/{model}.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        n_ctx=PH["detection"]["n_ctx"],
    script:
        "../../scripts/score_plot_hole_surprisal.py"


rule score_plot_holes:
    input:
        made=ph_made,
        verdicts=ph_verdicts,
        answers=ph_answers,
        nli=ph_nli,
        surprisal=ph_surprisal,
        validity=PH_VALIDITY,
        stories="results/{corpus}/stories.parquet",
    output:
        scores=report(
            "results/{corpus}/plot_holes/scores.csv",
            caption="../report/plot_holes_scores.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        surprisal="results/{corpus}/plot_holes/surprisal_contrasts.csv",
        answers="results/{corpus}/plot_holes/answers.parquet",
        story_measures="results/{corpus}/plot_holes/story_measures.parquet",
        left_out=report(
            "results/{corpus}/plot_holes/left_out.csv",
            caption="../report/plot_holes_left_out.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
    log:
        "logs/{corpus}/plot_holes/score_plot_holes.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        settings={
            "seed": PH["seed"],
            "confidence": config["stats"]["confidence"],
            "surprisal_z": PH["detection"]["surprisal_z"],
            "unparseable": PH["detection"]["unparseable"],
            "verdicts": PH["model_maker"]["verdicts"],
        },
        detectors=PH_DETECTORS,
        surprisal_models=PH_SURPRISAL,
    script:
        "../../scripts/score_plot_holes.py"


rule compare_plot_holes_human_llm:
    input:
        scores="results/hanna/plot_holes/scores.csv",
        answers="results/hanna/plot_holes/answers.parquet",
        stories="results/hanna/stories.parquet",
        validity=PH_VALIDITY,
    output:
        rates=report(
            "results/hanna/plot_holes/detection_rates.csv",
            caption="../report/plot_holes_rates.rst",
            category="Plot holes",
            subcategory="hanna",
        ),
    log:
        "logs/hanna/plot_holes/compare_plot_holes_human_llm.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        human=PH["human_group"],
        confidence=config["stats"]["confidence"],
        bootstrap=config["validity"]["bootstrap"],
        seed=config["validity"]["seed"],
        min_group_size=config["validity"]["min_group_size"],
    script:
        "../../scripts/compare_plot_holes_human_llm.py"


rule plot_plot_holes:
    input:
        scores="results/{corpus}/plot_holes/scores.csv",
        answers="results/{corpus}/plot_holes/answers.parquet",
        made=ph_made,
    output:
        png=report(
            "results/{corpus}/plot_holes/figures/ceeval.png",
            caption="../report/plot_holes_ceeval.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        pdf="results/{corpus}/plot_holes/figures/ceeval.pdf",
        length_png=report(
            "results/{corpus}/plot_holes/figures/ceeval_by_length.png",
            caption="../report/plot_holes_length.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        length_pdf="results/{corpus}/plot_holes/figures/ceeval_by_length.pdf",
    log:
        "logs/{corpus}/plot_holes/plot_plot_holes.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_plot_holes.py"


# The published FlawedFictions benchmark (plot_holes.benchmark), run by the same detectors.


rule read_plot_hole_benchmark:
    input:
        benchmark=ph_benchmark_file,
    output:
        made="results/flawedfictions/plot_holes/made/flawedfictions.parquet",
    log:
        "logs/flawedfictions/plot_holes/read_plot_hole_benchmark.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/read_plot_hole_benchmark.py"


rule detect_benchmark_plot_holes:
    input:
        unpack(model_weights),
        made="results/flawedfictions/plot_holes/made/flawedfictions.parquet",
    output:
        answers="results/flawedfictions/plot_holes/answers/{model}.parquet",
    log:
        "logs/flawedfictions/plot_holes/detect_benchmark_plot_holes/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        settings=PH_DETECTION,
    script:
        "../../scripts/detect_benchmark_plot_holes.py"


rule detect_benchmark_plot_holes_nli:
    input:
        unpack(model_weights),
        made="results/flawedfictions/plot_holes/made/flawedfictions.parquet",
        verdicts=[],
    output:
        answers="results/flawedfictions/plot_holes/nli/{model}.parquet",
    log:
        "logs/flawedfictions/plot_holes/detect_benchmark_plot_holes_nli/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_scoring,
        settings={"nli": PH["nli"], "min_sentences": PH["min_sentences"]},
    script:
        "../../scripts/detect_plot_holes_nli.py"


rule score_benchmark_plot_holes:
    input:
        made="results/flawedfictions/plot_holes/made/flawedfictions.parquet",
        answers=ph_benchmark_answers,
        nli=ph_benchmark_nli,
        validity=PH_VALIDITY,
    output:
        scores=report(
            "results/flawedfictions/plot_holes/scores.csv",
            caption="../report/plot_holes_benchmark.rst",
            category="Plot holes",
            subcategory="FlawedFictions",
        ),
        answers="results/flawedfictions/plot_holes/answers.parquet",
    log:
        "logs/flawedfictions/plot_holes/score_benchmark_plot_holes.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        settings={
            "seed": PH["seed"],
            "confidence": config["stats"]["confidence"],
            "unparseable": PH["detection"]["unparseable"],
        },
    script:
        "../../scripts/score_benchmark_plot_holes.py"
