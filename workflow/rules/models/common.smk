# Models: the lookups every language-model rule uses (its source, the settings that change what
# it answers, its weights on disk).


def model_source(wildcards):
    return dict(MODEL_SPECS[wildcards.model].source)


def model_settings(wildcards):
    """The model's settings that change what it answers or scores
    (storyflow.lm.specs.ModelSpec.scoring_settings): a rule's ``params.model``."""
    return MODEL_SPECS[wildcards.model].scoring_settings()


def weights_of(name):
    """Input: model ``name``'s weights (``weights``: its GGUF, or its checkpoint's manifest)
    when it runs in process; nothing when served (its server is asked once whether it
    answers: :func:`server_answers`)."""
    spec = MODEL_SPECS[name]
    if spec.served:
        server_answers(name)
        return {}
    return {"weights": plan.models.weights(spec)}


#: The served models whose server was asked at planning (once each).
SERVERS_ASKED = set()


def server_answers(name):
    """Ask served model ``name``'s server once, when the plan has a job for it (one request of
    2 s, no retries: storyflow.plan.models.server_problem): nothing answering is said before
    any job, naming its config entry. It does not stop the run: the plan cannot tell here
    whether a job that asks the server will run (its outputs may be there, and some of the
    model's jobs, such as the tension cuts, only read its tokenizer), and the server may be
    started after planning. A job's own parse (a cluster job) does not ask."""
    if name in SERVERS_ASKED or workflow.remote_exec or workflow.subprocess_exec:
        return
    SERVERS_ASKED.add(name)
    problem = plan.models.server_problem(MODEL_SPECS, name)
    if problem is not None:
        logger.warning(f"storyflow: {problem}")


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
