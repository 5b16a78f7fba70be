# Plot holes, stage 1: continuity errors made in the corpora's stories, by the controlled maker and
# the model maker (FlawedFictionsMaker; docs/plot_holes.md).


rule make_controlled_plot_holes:
    input:
        stories=plan.corpus.STORIES,
        sentences=plan.corpus.SENTENCES,
    output:
        made=fill(plan.plot_holes.MADE, maker="controlled"),
        skipped=fill(plan.plot_holes.SKIPPED, maker="controlled"),
        coverage=report(
            plan.plot_holes.COVERAGE,
            caption="../../report/plot_holes_coverage.rst",
            category="Plot holes",
            subcategory="{corpus}",
        ),
    log:
        plan.plot_holes.OUT.log("make_controlled_plot_holes"),
    wildcard_constraints:
        corpus=one_of(PLOT_HOLES_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        seed=PLOT_HOLES_SETTINGS["seed"],
        min_sentences=PLOT_HOLES_SETTINGS["min_sentences"],
        max_words=PLOT_HOLES_SETTINGS["max_words"],
        story_types=plot_holes_edited_story_types,
        spacy_model=SPACY_MODEL,
    script:
        "../../../scripts/make_controlled_plot_holes.py"


rule make_model_plot_holes:
    input:
        unpack(plot_holes_maker_weights),
        stories=plan.corpus.STORIES,
        sentences=plan.corpus.SENTENCES,
    output:
        made=fill(plan.plot_holes.MADE, maker="model"),
        skipped=fill(plan.plot_holes.SKIPPED, maker="model"),
        attempts=plan.plot_holes.MAKER_ATTEMPTS,
        sheet=plan.plot_holes.REVIEW_SHEET,
    log:
        plan.plot_holes.OUT.log("make_model_plot_holes"),
    wildcard_constraints:
        corpus=one_of(PLOT_HOLES_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    threads: plot_holes_maker_threads
    resources:
        mem_mb=plot_holes_maker_mem_mb,
        runtime=model_runtime,
        gpu=plot_holes_maker_gpus,
    params:
        model=plot_holes_maker_model,
        job=plot_holes_maker_job,
        spacy_model=SPACY_MODEL,
    script:
        "../../../scripts/make_model_plot_holes.py"
