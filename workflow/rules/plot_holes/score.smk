# Plot holes, stage 3: CEEval-Full and the story measures; HANNA's detection rates.


rule score_plot_holes:
    input:
        made=plot_holes_made,
        verdicts=PLOT_HOLES_SETTINGS["verdicts"],
        answers=plot_holes_answers,
        nli=plot_holes_nli,
        surprisal=plot_holes_surprisal,
        validity=plan.plot_holes.VALIDITY,
        stories=plan.corpus.STORIES,
    output:
        scores=report(
            plan.plot_holes.SCORES,
            caption="../../report/plot_holes_scores.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
        surprisal=plan.plot_holes.SURPRISAL_CONTRASTS,
        answers=plan.plot_holes.SCORED_ANSWERS,
        story_measures=plan.plot_holes.STORY_MEASURES,
        left_out=report(
            plan.plot_holes.LEFT_OUT,
            caption="../../report/plot_holes_left_out.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
    log:
        plan.plot_holes.OUT.log("score_plot_holes"),
    wildcard_constraints:
        corpus=one_of(PLOT_HOLES_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=PLOT_HOLES_SETTINGS["scoring"],
        detectors=PLOT_HOLES_DETECTORS,
        surprisal_models=PLOT_HOLES_SURPRISAL_MODELS,
        min_annotators=PLOT_HOLES_SETTINGS["min_annotators"],
    script:
        "../../../scripts/score_plot_holes.py"


rule compute_detection_rates:
    input:
        scores=fill(plan.plot_holes.SCORES, corpus="hanna"),
        answers=fill(plan.plot_holes.SCORED_ANSWERS, corpus="hanna"),
        stories=fill(plan.corpus.STORIES, corpus="hanna"),
        validity=plan.plot_holes.VALIDITY,
    output:
        rates=report(
            fill(plan.plot_holes.DETECTION_RATES, corpus="hanna"),
            caption="../../report/plot_holes_rates.rst",
            category="Plot holes",
            subcategory="hanna",
        ),
    log:
        fill(plan.plot_holes.OUT.log("compute_detection_rates"), corpus="hanna"),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        human=PLOT_HOLES_SETTINGS["human_group"],
        confidence=STATISTICS["confidence"],
        resamples=STATISTICS["resamples"],
        seed=STATISTICS["seed"],
        min_group_size=STATISTICS["min_group_size"],
    script:
        "../../../scripts/compute_detection_rates.py"
