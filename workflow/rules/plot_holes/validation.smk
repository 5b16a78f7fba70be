# Plot holes: the detectors' validity check (docs/validity.md), on controlled pairs of a validation
# pool of HIPPOCORPUS stories outside the analysed sample and of every plot-hole corpus, pooled.


# The detectors' validity check (docs/validity.md): controlled pairs of a validation pool of
# HIPPOCORPUS stories outside the analysed sample, and of every plot-hole corpus, pooled.
rule make_plot_hole_validation:
    input:
        csv=hippocorpus_csv,
        sample=fill(plan.corpus.STORIES, corpus="hippocorpus"),
    output:
        made=plan.plot_holes.VALIDATION_MADE,
        coverage=report(
            plan.plot_holes.VALIDATION_COVERAGE,
            caption="../../report/plot_holes_validation_coverage.rst",
            category="Plot holes",
            subcategory="validity",
        ),
        skipped=plan.plot_holes.VALIDATION_SKIPPED,
    log:
        plan.plot_holes.OUT.shared_log("make_plot_hole_validation"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        story_types=HIPPOCORPUS_SAMPLE["story_types"],
        pairs=PLOT_HOLES_SETTINGS["validation"]["pairs"],
        max_words=PLOT_HOLES_SETTINGS["validation"]["max_words"],
        seed=PLOT_HOLES_SETTINGS["validation"]["seed"],
        classes=PLOT_HOLES_SETTINGS["validation"]["classes"],
        min_sentences=PLOT_HOLES_SETTINGS["min_sentences"],
        spacy_model=SPACY_MODEL,
    script:
        "../../../scripts/make_plot_hole_validation.py"


rule detect_plot_hole_validation:
    input:
        unpack(model_weights),
        made=plan.plot_holes.VALIDATION_MADE,
    output:
        answers=plan.plot_holes.VALIDATION_ANSWERS,
    log:
        plan.plot_holes.OUT.shared_log("detect_plot_hole_validation", "model"),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=model_runtime,
        gpu=model_gpus,
    params:
        model=model_settings,
        settings=PLOT_HOLES_DETECTION,
    script:
        "../../../scripts/detect_benchmark_plot_holes.py"


rule detect_plot_hole_validation_nli:
    input:
        unpack(model_weights),
        made=[plan.plot_holes.VALIDATION_MADE],
        verdicts=[],
    output:
        answers=plan.plot_holes.VALIDATION_NLI,
    log:
        plan.plot_holes.OUT.shared_log("detect_plot_hole_validation_nli", "model"),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=model_runtime,
        gpu=model_gpus,
    params:
        model=model_settings,
        settings=PLOT_HOLES_SETTINGS["nli"],
        min_annotators=PLOT_HOLES_SETTINGS["min_annotators"],
    script:
        "../../../scripts/detect_plot_holes_nli.py"


rule score_plot_hole_validation_surprisal:
    input:
        unpack(model_weights),
        made=plan.plot_holes.VALIDATION_MADE,
    output:
        surprisal=plan.plot_holes.VALIDATION_SURPRISAL,
    log:
        plan.plot_holes.OUT.shared_log("score_plot_hole_validation_surprisal", "model"),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=model_runtime,
        gpu=model_gpus,
    params:
        model=model_settings,
        n_ctx=PLOT_HOLES_SETTINGS["surprisal_n_ctx"],
    script:
        "../../../scripts/score_plot_hole_surprisal.py"


rule check_plot_hole_detectors:
    input:
        made=plot_holes_check_made,
        files=plot_holes_check_files,
    output:
        validity=report(
            plan.plot_holes.VALIDITY,
            caption="../../report/plot_holes_validity.rst",
            category="Plot holes",
            subcategory="validity",
        ),
    log:
        plan.plot_holes.OUT.shared_log("check_plot_hole_detectors"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        made_sources=plot_holes_check_labels()["made_sources"],
        file_labels=plot_holes_check_labels()["file_labels"],
        settings=PLOT_HOLES_SETTINGS["checks"],
        surprisal_z=PLOT_HOLES_SETTINGS["surprisal_z"],
    script:
        "../../../scripts/check_plot_hole_detectors.py"
