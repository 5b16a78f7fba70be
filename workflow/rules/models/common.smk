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
