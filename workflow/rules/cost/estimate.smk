# What every language-model stage will cost, estimated from the sentence tables before any
# model is asked (docs/cost_and_failures.md); cost.max_hours stops a run that would exceed it.


rule estimate_lm_cost:
    input:
        sentences=expand(plan.corpus.SENTENCES, corpus=LM_COST_CORPORA),
    output:
        cost=LM_COST_TABLE,
    log:
        plan.cost.OUT.shared_log("estimate_lm_cost"),
    # first among the jobs that become ready with the sentence tables (the stages' items come
    # later); nothing takes its table as input, so a new rate or model re-runs it alone
    priority: 100
    conda:
        "../../../envs/storyflow.yaml"
    params:
        corpora=LM_COST_CORPORA,
        settings=LM_COST_SETTINGS,
        rates=LM_COST_ESTIMATE["rates"],
        max_hours=LM_COST_ESTIMATE["max_hours"],
    script:
        "../../../scripts/estimate_lm_cost.py"
