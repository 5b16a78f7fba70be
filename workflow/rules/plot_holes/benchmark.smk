# Plot holes: the published FlawedFictions benchmark (plot_holes.benchmark), run by the same detectors.


# The published FlawedFictions benchmark (plot_holes.benchmark), run by the same detectors.
rule read_plot_hole_benchmark:
    input:
        benchmark=plot_holes_benchmark_file,
    output:
        made=plan.plot_holes.BENCHMARK_MADE,
    log:
        fill(
            plan.plot_holes.OUT.log("read_plot_hole_benchmark"),
            corpus="flawedfictions",
        ),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        spacy_model=SPACY_MODEL,
    script:
        "../../../scripts/read_plot_hole_benchmark.py"


rule detect_benchmark_plot_holes:
    input:
        unpack(model_weights),
        made=plan.plot_holes.BENCHMARK_MADE,
    output:
        answers=fill(plan.plot_holes.ANSWERS, corpus="flawedfictions"),
    log:
        fill(
            plan.plot_holes.OUT.log("detect_benchmark_plot_holes", "model"),
            corpus="flawedfictions",
        ),
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


rule detect_benchmark_plot_holes_nli:
    input:
        unpack(model_weights),
        made=plan.plot_holes.BENCHMARK_MADE,
        verdicts=[],
    output:
        answers=fill(plan.plot_holes.NLI, corpus="flawedfictions"),
    log:
        fill(
            plan.plot_holes.OUT.log("detect_benchmark_plot_holes_nli", "model"),
            corpus="flawedfictions",
        ),
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


rule score_benchmark_plot_holes:
    input:
        made=plan.plot_holes.BENCHMARK_MADE,
        answers=plot_holes_benchmark_answers,
        nli=plot_holes_benchmark_nli,
        validity=plan.plot_holes.VALIDITY,
    output:
        scores=report(
            fill(plan.plot_holes.SCORES, corpus="flawedfictions"),
            caption="../../report/plot_holes_benchmark.rst",
            category="Plot holes",
            subcategory="FlawedFictions",
        ),
        answers=fill(plan.plot_holes.SCORED_ANSWERS, corpus="flawedfictions"),
    log:
        fill(
            plan.plot_holes.OUT.log("score_benchmark_plot_holes"),
            corpus="flawedfictions",
        ),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=PLOT_HOLES_SETTINGS["benchmark_scoring"],
    script:
        "../../../scripts/score_benchmark_plot_holes.py"
