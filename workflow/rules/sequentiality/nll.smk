rule plan_nll:
    input:
        unpack(model_weights),
        sentences=plan.corpus.SENTENCES,
        stories=plan.corpus.STORIES,
    output:
        cost=plan.sequentiality.NLL_COST,
        excluded=plan.sequentiality.NLL_EXCLUDED,
    log:
        plan.sequentiality.OUT.log("plan_nll", "model"),
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
        cost=every_model(plan.sequentiality.NLL_COST),
        excluded=every_model(plan.sequentiality.NLL_EXCLUDED),
    output:
        estimate=plan.sequentiality.NLL_ESTIMATE,
    log:
        plan.sequentiality.OUT.log("estimate_nll_time"),
    # runs as soon as the plans exist, before the shards that become ready at the same time
    priority: 50
    conda:
        "../../../envs/storyflow.yaml"
    params:
        models=SEQUENTIALITY_MODELS,
        tokens_per_second=NLL_THROUGHPUT["tokens_per_second"],
    script:
        "../../../scripts/estimate_nll_time.py"


rule score_nll_shard:
    input:
        unpack(model_weights),
        sentences=plan.corpus.SENTENCES,
        stories=plan.corpus.STORIES,
        # the plan (stories left out, planned tokens) is made and logged before any scoring
        plan=plan.sequentiality.NLL_COST,
    output:
        nll=plan.sequentiality.NLL_SHARD,
    log:
        plan.sequentiality.OUT.log("score_nll_shard", "model", "shard"),
    wildcard_constraints:
        model=one_of(SEQUENTIALITY_MODELS),
    conda:
        "../../../envs/storyflow.yaml"
    threads: model_threads
    resources:
        mem_mb=model_mem_mb,
        runtime=nll_runtime,
        gpu=model_gpus,
    params:
        settings=nll_settings,
        model=model_settings,
        n_shards=NLL_THROUGHPUT["shards"],
    script:
        "../../../scripts/score_nll.py"


rule gather_nll:
    input:
        shards=nll_shards,
    output:
        nll=plan.sequentiality.NLL,
    log:
        plan.sequentiality.OUT.log("gather_nll", "model"),
    wildcard_constraints:
        model=one_of(SEQUENTIALITY_MODELS),
    conda:
        "../../../envs/storyflow.yaml"
    script:
        "../../../scripts/gather_nll.py"
