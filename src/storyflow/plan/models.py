"""The models' weights on disk (rule materialize_model; :mod:`storyflow.lm.weights`)."""

from __future__ import annotations

from storyflow.plan.layout import Layout, fill

#: Its logs: ``logs/models/...``.
OUT = Layout("models")

#: A model's local weights (rule materialize_model's output; the input of every rule that runs
#: the model in process).
WEIGHTS = "resources/models/{model}.gguf"


def weights(model: str) -> str:
    """The GGUF file of model ``model``: :data:`WEIGHTS` filled."""
    return fill(WEIGHTS, model=model)
