# Models: the lookups every language-model rule uses (its source, the settings that change what
# it answers, its weights on disk).


def model_source(wildcards):
    return dict(MODEL_SPECS[wildcards.model].source)


def model_settings(wildcards):
    """The model's settings that change what it answers or scores
    (storyflow.lm.registry.ModelSpec.scoring_settings): a rule's ``params.model``."""
    return MODEL_SPECS[wildcards.model].scoring_settings()


def weights_of(name):
    """Input: model ``name``'s weights (``weights``: its GGUF, or its checkpoint's manifest)
    when it runs in process; nothing when served."""
    spec = MODEL_SPECS[name]
    return {} if spec.served else {"weights": plan.models.weights(spec)}


def model_weights(wildcards):
    return weights_of(wildcards.model)


def checkpoint_files(wildcards):
    """Input: a checkpoint folder's files on this machine (storyflow.plan.models)."""
    return plan.models.checkpoint_files(MODEL_SPECS[wildcards.model])


# What a job running a model asks for (storyflow.plan.models): the model's device block and
# weights; memory and run time grow with Snakemake's attempt. A name that is no model (the
# embedding judge, an NLI classifier) gets the defaults.


def model_threads(wildcards):
    return plan.models.threads(MODEL_SPECS.get(wildcards.model))


def model_mem_mb(wildcards, input, attempt):
    weights = getattr(input, "weights", None)
    return plan.models.mem_mb(MODEL_SPECS.get(wildcards.model), weights, attempt)


def model_runtime(wildcards, attempt):
    return plan.models.runtime(attempt)


def model_gpus(wildcards):
    return plan.models.gpus(MODEL_SPECS.get(wildcards.model))


def judge_threads(wildcards):
    return plan.models.threads(MODEL_SPECS.get(wildcards.judge))


def judge_mem_mb(wildcards, input, attempt):
    weights = getattr(input, "weights", None)
    return plan.models.mem_mb(MODEL_SPECS.get(wildcards.judge), weights, attempt)


def judge_gpus(wildcards):
    return plan.models.gpus(MODEL_SPECS.get(wildcards.judge))


def nll_runtime(wildcards, attempt):
    return plan.models.runtime(attempt, plan.models.NLL_MINUTES)


MODELS_IN_USE = plan.models.in_use(MODEL_SPECS)  # the provenance table's models
