# Plot holes, stage 2: every detector's answers, the NLI baseline and the surprisal baseline.


rule detect_plot_holes:
    input:
        unpack(model_weights),
        made=plot_holes_made,
        verdicts=PLOT_HOLES_SETTINGS["verdicts"],
        stories=plan.corpus.STORIES,
        sentences=plan.corpus.SENTENCES,
    output:
        answers=plan.plot_holes.ANSWERS,
    log:
        plan.plot_holes.OUT.log("detect_plot_holes", "model"),
    wildcard_constraints:
        corpus=one_of(PLOT_HOLES_CORPORA),
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
        min_annotators=PLOT_HOLES_SETTINGS["min_annotators"],
    script:
        "../../../scripts/detect_plot_holes.py"


rule detect_plot_holes_nli:
    input:
        unpack(model_weights),
        made=plot_holes_made,
        verdicts=PLOT_HOLES_SETTINGS["verdicts"],
    output:
        answers=plan.plot_holes.NLI,
    log:
        plan.plot_holes.OUT.log("detect_plot_holes_nli", "model"),
    wildcard_constraints:
        corpus=one_of(PLOT_HOLES_CORPORA),
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


rule score_plot_hole_surprisal:
    input:
        unpack(model_weights),
        made=fill(plan.plot_holes.MADE, maker="controlled"),
    output:
        surprisal=plan.plot_holes.SURPRISAL,
    log:
        plan.plot_holes.OUT.log("score_plot_hole_surprisal", "model"),
    wildcard_constraints:
        corpus=one_of(PLOT_HOLES_CORPORA),
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
