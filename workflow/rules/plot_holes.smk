# Plot holes: continuity errors made from the corpora's stories, found by the configured models
# and baselines, scored with CEEval-Full (docs/plot_holes.md).


include: "plot_holes/common.smk"


# The detectors' validity check (docs/validity.md): controlled pairs of a validation pool of
# HIPPOCORPUS stories outside the analysed sample, and of every plot-hole corpus, pooled.
rule make_plot_hole_validation:
    input:
        csv=hippocorpus_csv(),
        sample=CORPUS_OUT.of("hippocorpus", "stories.parquet"),
    output:
        made=PLOT_HOLES_OUT.shared("validation/made.parquet"),
        coverage=report(
            PLOT_HOLES_OUT.shared("validation/tables/coverage.csv"),
            caption="../report/plot_holes_validation_coverage.rst",
            category="Plot holes",
            subcategory="validity",
        ),
        skipped=PLOT_HOLES_OUT.shared("validation/tables/skipped.csv"),
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
        made=PLOT_HOLES_OUT.shared("validation/made.parquet"),
    output:
        answers=PLOT_HOLES_OUT.shared("validation/answers/{model}.parquet"),
    log:
        "logs/plot_holes/detect_plot_hole_validation/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
        settings=PH_DETECTION,
    script:
        "../../scripts/detect_benchmark_plot_holes.py"


rule detect_plot_hole_validation_nli:
    input:
        unpack(model_weights),
        made=[PLOT_HOLES_OUT.shared("validation/made.parquet")],
        verdicts=[],
    output:
        answers=PLOT_HOLES_OUT.shared("validation/nli/{model}.parquet"),
    log:
        "logs/plot_holes/detect_plot_hole_validation_nli/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
        settings={"nli": PH["nli"], "min_sentences": PH["min_sentences"]},
        min_annotators=PH_MIN_ANNOTATORS,
    script:
        "../../scripts/detect_plot_holes_nli.py"


rule score_plot_hole_validation_surprisal:
    input:
        made=PLOT_HOLES_OUT.shared("validation/made.parquet"),
        gguf="resources/models/{model}.gguf",
    output:
        surprisal=PLOT_HOLES_OUT.shared("validation/surprisal/{model}.parquet"),
    log:
        "logs/plot_holes/score_plot_hole_validation_surprisal/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
        n_ctx=PH["detection"]["n_ctx"],
    script:
        "../../scripts/score_plot_hole_surprisal.py"


rule check_plot_hole_detectors:
    input:
        made=ph_check_made,
        files=ph_check_files,
    output:
        validity=report(
            PLOT_HOLES_OUT.shared_table("validity.csv"),
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
        stories=CORPUS_OUT("stories.parquet"),
        sentences=CORPUS_OUT("sentences.parquet"),
    output:
        made=PLOT_HOLES_OUT("made/controlled.parquet"),
        skipped=PLOT_HOLES_OUT.table("skipped/controlled.csv"),
        coverage=report(
            PLOT_HOLES_OUT.table("coverage.csv"),
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
        story_types=ph_edited_story_types,
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/make_controlled_plot_holes.py"


rule make_model_plot_holes:
    input:
        unpack(ph_maker_weights),
        stories=CORPUS_OUT("stories.parquet"),
        sentences=CORPUS_OUT("sentences.parquet"),
    output:
        made=PLOT_HOLES_OUT("made/model.parquet"),
        skipped=PLOT_HOLES_OUT.table("skipped/model.csv"),
        attempts=PLOT_HOLES_OUT("maker_attempts.parquet"),
        sheet=PLOT_HOLES_OUT.table("review_sheet.csv"),
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
        max_words=PH["max_words"],
        story_types=ph_edited_story_types,
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/make_model_plot_holes.py"


rule detect_plot_holes:
    input:
        unpack(model_weights),
        made=ph_made,
        verdicts=ph_verdicts,
        stories=CORPUS_OUT("stories.parquet"),
        sentences=CORPUS_OUT("sentences.parquet"),
    output:
        answers=PLOT_HOLES_OUT("answers/{model}.parquet"),
    log:
        "logs/{corpus}/plot_holes/detect_plot_holes/{model}.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
        settings=PH_DETECTION,
        min_annotators=PH_MIN_ANNOTATORS,
    script:
        "../../scripts/detect_plot_holes.py"


rule detect_plot_holes_nli:
    input:
        unpack(model_weights),
        made=ph_made,
        verdicts=ph_verdicts,
    output:
        answers=PLOT_HOLES_OUT("nli/{model}.parquet"),
    log:
        "logs/{corpus}/plot_holes/detect_plot_holes_nli/{model}.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
        settings={"nli": PH["nli"], "min_sentences": PH["min_sentences"]},
        min_annotators=PH_MIN_ANNOTATORS,
    script:
        "../../scripts/detect_plot_holes_nli.py"


rule score_plot_hole_surprisal:
    input:
        made=PLOT_HOLES_OUT("made/controlled.parquet"),
        gguf="resources/models/{model}.gguf",
    output:
        surprisal=PLOT_HOLES_OUT("surprisal/{model}.parquet"),
    log:
        "logs/{corpus}/plot_holes/score_plot_hole_surprisal/{model}.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
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
        stories=CORPUS_OUT("stories.parquet"),
    output:
        scores=report(
            PLOT_HOLES_OUT.table("scores.csv"),
            caption="../report/plot_holes_scores.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        surprisal=PLOT_HOLES_OUT.table("surprisal_contrasts.csv"),
        answers=PLOT_HOLES_OUT("answers.parquet"),
        story_measures=PLOT_HOLES_OUT("story_measures.parquet"),
        left_out=report(
            PLOT_HOLES_OUT.table("left_out.csv"),
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
        },
        detectors=PH_DETECTORS,
        surprisal_models=PH_SURPRISAL,
        min_annotators=PH_MIN_ANNOTATORS,
    script:
        "../../scripts/score_plot_holes.py"


rule compute_detection_rates:
    input:
        scores=PLOT_HOLES_OUT.of("hanna", "tables/scores.csv"),
        answers=PLOT_HOLES_OUT.of("hanna", "answers.parquet"),
        stories=CORPUS_OUT.of("hanna", "stories.parquet"),
        validity=PH_VALIDITY,
    output:
        rates=report(
            PLOT_HOLES_OUT.of("hanna", "tables/detection_rates.csv"),
            caption="../report/plot_holes_rates.rst",
            category="Plot holes",
            subcategory="hanna",
        ),
    log:
        "logs/hanna/plot_holes/compute_detection_rates.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        human=PH["human_group"],
        confidence=config["stats"]["confidence"],
        bootstrap=config["validity"]["bootstrap"],
        seed=config["validity"]["seed"],
        min_group_size=config["validity"]["min_group_size"],
    script:
        "../../scripts/compute_detection_rates.py"


rule plot_ceeval:
    input:
        scores=PLOT_HOLES_OUT.table("scores.csv"),
        answers=PLOT_HOLES_OUT("answers.parquet"),
        made=ph_made,
    output:
        png=report(
            PLOT_HOLES_OUT.figure("ceeval.png"),
            caption="../report/plot_holes_ceeval.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        pdf=PLOT_HOLES_OUT.figure("ceeval.pdf"),
        length_png=report(
            PLOT_HOLES_OUT.figure("ceeval_by_length.png"),
            caption="../report/plot_holes_length.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        length_pdf=PLOT_HOLES_OUT.figure("ceeval_by_length.pdf"),
    log:
        "logs/{corpus}/plot_holes/plot_ceeval.log",
    wildcard_constraints:
        corpus=one_of(PH_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_ceeval.py"


# The published FlawedFictions benchmark (plot_holes.benchmark), run by the same detectors.
rule read_plot_hole_benchmark:
    input:
        benchmark=ph_benchmark_file,
    output:
        made=PLOT_HOLES_OUT.of("flawedfictions", "made/flawedfictions.parquet"),
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
        made=PLOT_HOLES_OUT.of("flawedfictions", "made/flawedfictions.parquet"),
    output:
        answers=PLOT_HOLES_OUT.of("flawedfictions", "answers/{model}.parquet"),
    log:
        "logs/flawedfictions/plot_holes/detect_benchmark_plot_holes/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
        settings=PH_DETECTION,
    script:
        "../../scripts/detect_benchmark_plot_holes.py"


rule detect_benchmark_plot_holes_nli:
    input:
        unpack(model_weights),
        made=PLOT_HOLES_OUT.of("flawedfictions", "made/flawedfictions.parquet"),
        verdicts=[],
    output:
        answers=PLOT_HOLES_OUT.of("flawedfictions", "nli/{model}.parquet"),
    log:
        "logs/flawedfictions/plot_holes/detect_benchmark_plot_holes_nli/{model}.log",
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
        settings={"nli": PH["nli"], "min_sentences": PH["min_sentences"]},
        min_annotators=PH_MIN_ANNOTATORS,
    script:
        "../../scripts/detect_plot_holes_nli.py"


rule score_benchmark_plot_holes:
    input:
        made=PLOT_HOLES_OUT.of("flawedfictions", "made/flawedfictions.parquet"),
        answers=ph_benchmark_answers,
        nli=ph_benchmark_nli,
        validity=PH_VALIDITY,
    output:
        scores=report(
            PLOT_HOLES_OUT.of("flawedfictions", "tables/scores.csv"),
            caption="../report/plot_holes_benchmark.rst",
            category="Plot holes",
            subcategory="FlawedFictions",
        ),
        answers=PLOT_HOLES_OUT.of("flawedfictions", "answers.parquet"),
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
