# Narrative tension by ending forecasting (docs/tension.md): cuts, sampled endings, the
# forecasters' ROCStories forecasts (judge calibration and validity checks), judges, no-rate
# curves, the PMI companion and the group comparisons (labelled with the checks' verdicts).


include: "tension/common.smk"


rule plan_tension_cuts:
    input:
        unpack(model_weights),
        stories=CORPUS_OUT("stories.parquet"),
        sentences=CORPUS_OUT("sentences.parquet"),
    output:
        cuts=TENSION_OUT("cuts/{model}.parquet"),
        excluded=TENSION_OUT.table("excluded/{model}.csv"),
    log:
        "logs/{corpus}/tension/plan_tension_cuts/{model}.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        cuts=TS["cuts"],
        model=model_settings,
    script:
        "../../scripts/plan_tension_cuts.py"


rule sample_endings:
    input:
        unpack(model_weights),
        cuts=TENSION_OUT("cuts/{model}.parquet"),
    output:
        endings=TENSION_OUT("endings/{model}.parquet"),
    log:
        "logs/{corpus}/tension/sample_endings/{model}.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
        model=one_of(TENSION["forecasters"]),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        k=TS["k"],
        sampling=TS["sampling"],
        prompts=TS["prompts"],
        model=model_settings,
    script:
        "../../scripts/sample_endings.py"


rule sample_calibration_endings:
    input:
        unpack(model_weights),
        stories=CORPUS_OUT.of("rocstories", "stories.parquet"),
    output:
        endings=TENSION_OUT.shared("calibration/endings/{model}.parquet"),
    log:
        "logs/tension/sample_calibration_endings/{model}.log",
    wildcard_constraints:
        model=one_of(TENSION["forecasters"]),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        stories=TS["embedding"]["calibration_stories"],
        k=TS["k"],
        sampling=TS["sampling"],
        prompts=TS["prompts"],
        model=model_settings,
    script:
        "../../scripts/sample_calibration_endings.py"


rule calibrate_tension_judge:
    input:
        stories=CORPUS_OUT.of("rocstories", "stories.parquet"),
        endings=TENSION_OUT.shared("calibration/endings/{model}.parquet"),
    output:
        table=report(
            TENSION_OUT.shared_table("calibration/{model}.csv"),
            caption="../report/tension_calibration.rst",
            category="Tension",
        ),
        cosines=TENSION_OUT.shared("calibration/cosines/{model}.parquet"),
    log:
        "logs/tension/calibrate_tension_judge/{model}.log",
    wildcard_constraints:
        model=one_of(TENSION["forecasters"]),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        embedding_model=TS["embedding"]["model"],
        chunk_words=TS["embedding"]["chunk_words"],
        seed=TS["embedding"]["seed"],
    script:
        "../../scripts/calibrate_tension_judge.py"


rule judge_calibration_endings:
    input:
        unpack(tension_judge_weights),
        stories=CORPUS_OUT.of("rocstories", "stories.parquet"),
        endings=TENSION_OUT.shared("calibration/endings/{model}.parquet"),
    output:
        judgments=TENSION_OUT.shared("calibration/judgments/{model}/{judge}.parquet"),
    log:
        "logs/tension/judge_calibration_endings/{model}/{judge}.log",
    wildcard_constraints:
        model=one_of(TENSION["forecasters"]),
        judge=one_of(TENSION_MODEL_JUDGES),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        judge=tension_judge,
        judge_model=tension_judge_model,
        seed=TS["embedding"]["seed"],
    script:
        "../../scripts/judge_calibration_endings.py"


rule check_tension_validity:
    input:
        cosines=TENSION_OUT.shared("calibration/cosines/{model}.parquet"),
        calibration=TENSION_OUT.shared_table("calibration/{model}.csv"),
        judgments=tension_calibration_judgments,
    output:
        table=report(
            TENSION_OUT.shared_table("validity/{model}.csv"),
            caption="../report/tension_validity.rst",
            category="Tension",
        ),
    log:
        "logs/tension/check_tension_validity/{model}.log",
    wildcard_constraints:
        model=one_of(TENSION["forecasters"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        forecaster=lambda wildcards: wildcards.model,
        threshold=TS["embedding"]["threshold"],
        judges=TENSION["judges"],
        model_judges=TENSION_MODEL_JUDGES,
        settings=TENSION_CHECKS,
    script:
        "../../scripts/check_tension_validity.py"


rule judge_endings:
    input:
        unpack(tension_judge_inputs),
        endings=TENSION_OUT("endings/{model}.parquet"),
        cuts=TENSION_OUT("cuts/{model}.parquet"),
    output:
        judgments=TENSION_OUT("judgments/{model}/{judge}.parquet"),
        curves=TENSION_OUT("curves/{model}/{judge}.parquet"),
        stories=TENSION_OUT("stories/{model}/{judge}.parquet"),
    log:
        "logs/{corpus}/tension/judge_endings/{model}/{judge}.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
        model=one_of(TENSION["forecasters"]),
        judge=one_of(TENSION["judges"]),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        judge=tension_judge,
        judge_model=tension_judge_model,
        curves=TS["curves"],
    script:
        "../../scripts/judge_endings.py"


rule score_tension_pmi:
    input:
        cuts=TENSION_OUT("cuts/{model}.parquet"),
        sentences=CORPUS_OUT("sentences.parquet"),
        gguf="resources/models/{model}.gguf",
    output:
        pmi=TENSION_OUT("pmi/{model}.parquet"),
    log:
        "logs/{corpus}/tension/score_tension_pmi/{model}.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
        model=one_of(TENSION["pmi_models"]),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    params:
        model=model_settings,
    script:
        "../../scripts/score_tension_pmi.py"


rule summarize_tension:
    input:
        stories=CORPUS_OUT("stories.parquet"),
        scores=tension_scores,
        pmi=tension_pmi,
        validity=TENSION_VALIDITY,
    output:
        groups=report(
            TENSION_OUT.table("group_means.csv"),
            caption="../report/tension_groups.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        effects=report(
            TENSION_OUT.table("effects.csv"),
            caption="../report/tension_effects.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        likelihood=TENSION_OUT.table("likelihood_vs_sampled.csv"),
        measures=TENSION_OUT("story_measures.parquet"),
    log:
        "logs/{corpus}/tension/summarize_tension.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        k=TS["k"],
        intervals=TENSION_INTERVALS,
        contrasts=tension_contrasts,
        forecasters=TENSION["forecasters"],
        judges=TENSION["judges"],
        pmi_models=TENSION["pmi_models"],
    script:
        "../../scripts/summarize_tension.py"


rule plot_tension_by_group:
    input:
        groups=TENSION_OUT.table("group_means.csv"),
    output:
        png=report(
            TENSION_OUT.figure("by_group.png"),
            caption="../report/tension_by_group.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        pdf=TENSION_OUT.figure("by_group.pdf"),
    log:
        "logs/{corpus}/tension/plot_tension_by_group.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_tension_by_group.py"


rule plot_tension_curves:
    input:
        curves=TENSION_OUT("curves/{model}/{judge}.parquet"),
    output:
        png=report(
            TENSION_OUT.figure("curves/{model}/{judge}.png"),
            caption="../report/tension_curves.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        pdf=TENSION_OUT.figure("curves/{model}/{judge}.pdf"),
    log:
        "logs/{corpus}/tension/plot_tension_curves/{model}/{judge}.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
        model=one_of(TENSION["forecasters"]),
        judge=one_of(TENSION["judges"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
        smoothing=TS["curves"]["smoothing"],
        angle=tension_marked_angle,
    script:
        "../../scripts/plot_tension_curves.py"


rule plot_inflection_rates:
    input:
        groups=TENSION_OUT.table("group_means.csv"),
    output:
        png=report(
            TENSION_OUT.figure("inflection_rates.png"),
            caption="../report/tension_inflection_rates.rst",
            category="Tension",
            subcategory="{corpus}",
        ),
        pdf=TENSION_OUT.figure("inflection_rates.pdf"),
    log:
        "logs/{corpus}/tension/plot_inflection_rates.log",
    wildcard_constraints:
        corpus=one_of(TENSION["corpora"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_inflection_rates.py"
