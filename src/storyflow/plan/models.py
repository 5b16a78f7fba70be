"""The models' weights on disk (rules materialize_model and materialize_checkpoint;
:mod:`storyflow.lm.weights`)."""

from __future__ import annotations

from storyflow.lm.registry import ModelSpec
from storyflow.plan.layout import Layout, fill

#: Its logs: ``logs/models/...``.
OUT = Layout("models")

#: A GGUF model's local weights (rule materialize_model's output: a link to the file).
WEIGHTS = "resources/models/{model}.gguf"
#: A Hugging Face checkpoint's manifest (rule materialize_checkpoint's output): the folder its
#: weights are read from and the hub commit they are (:func:`storyflow.lm.weights.checkpoint`).
CHECKPOINT = "resources/models/{model}.checkpoint.json"


def weights(spec: ModelSpec) -> str:
    """What a job running ``spec`` in process reads its weights from: its GGUF
    (:data:`WEIGHTS`) or its checkpoint's manifest (:data:`CHECKPOINT`), filled."""
    return fill(CHECKPOINT if spec.checkpoint else WEIGHTS, model=spec.name)
