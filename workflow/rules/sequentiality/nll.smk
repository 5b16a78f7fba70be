rule plan_nll:
    input:
        sentences=CORPUS_OUT("sentences.parquet"),
        stories=CORPUS_OUT("stories.parquet"),
        gguf="resources/models/{model}.gguf",
    output:
        cost=SEQUENTIALITY_OUT.table("nll_cost/{model}.csv"),
        excluded=SEQUENTIALITY_OUT.table("nll_excluded/{model}.csv"),
    log:
        "logs/{corpus}/plan_nll/{model}.log",
    wildcard_constraints:
        model=one_of(SEQUENTIALITY_MODELS),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        settings=nll_settings,
        model=model_settings,
    script:
        "../../../scripts/plan_nll.py"


rule estimate_nll_time:
    input:
        cost=per_model_plans("nll_cost"),
        excluded=per_model_plans("nll_excluded"),
    output:
        estimate=SEQUENTIALITY_OUT.table("nll_estimate.csv"),
    log:
        "logs/{corpus}/estimate_nll_time.log",
    # runs as soon as the plans exist, before the shards that become ready at the same time
    priority: 50
    conda:
        "../../../envs/storyflow.yaml"
    params:
        models=SEQUENTIALITY_MODELS,
        tokens_per_second=config["nll"]["tokens_per_second"],
    script:
        "../../../scripts/estimate_nll_time.py"


rule score_nll_shard:
    input:
        sentences=CORPUS_OUT("sentences.parquet"),
        stories=CORPUS_OUT("stories.parquet"),
        gguf="resources/models/{model}.gguf",
        # the plan (stories left out, planned tokens) is made and logged before any scoring
        plan=SEQUENTIALITY_OUT.table("nll_cost/{model}.csv"),
    output:
        nll=SEQUENTIALITY_OUT("nll/{model}/shard-{shard}.parquet"),
    log:
        "logs/{corpus}/score_nll/{model}/shard-{shard}.log",
    wildcard_constraints:
        model=one_of(SEQUENTIALITY_MODELS),
    conda:
        "../../../envs/storyflow.yaml"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=240,
    params:
        settings=nll_settings,
        model=model_settings,
        n_shards=config["nll"]["shards"],
    script:
        "../../../scripts/score_nll.py"


rule gather_nll:
    input:
        shards=nll_shards,
    output:
        nll=SEQUENTIALITY_OUT("nll/{model}.parquet"),
    log:
        "logs/{corpus}/gather_nll/{model}.log",
    wildcard_constraints:
        model=one_of(SEQUENTIALITY_MODELS),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/gather_nll.py"
