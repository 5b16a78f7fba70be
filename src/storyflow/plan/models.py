"""The models' weights on disk (rules materialize_model and materialize_checkpoint;
:mod:`storyflow.lm.weights`) and what a job running a model asks a cluster for (threads,
memory, run time, a GPU: each from the model's ``device`` block and its weights)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import storyflow.plan.registry as registry
from storyflow.lm import model_checks
from storyflow.lm.specs import ModelSpec, model_specs
from storyflow.plan.layout import RESULTS, Layout, fill

#: Its logs: ``logs/models/...``.
OUT = Layout("models")

#: A GGUF model's local weights (rule materialize_model's output: a link to the file).
WEIGHTS = "resources/models/{model}.gguf"
#: A Hugging Face checkpoint's manifest (rule materialize_checkpoint's output): the folder its
#: weights are read from and the hub commit they are (:func:`storyflow.lm.weights.checkpoint`).
CHECKPOINT = "resources/models/{model}.checkpoint.json"


def specs(config: Mapping[str, Any]) -> dict[str, ModelSpec]:
    """The config's ``models:`` as typed specs by name (:func:`storyflow.lm.specs.model_specs`:
    ``prompt`` and ``backend`` resolved, what the schema cannot check checked, the roles that
    score text among it: :func:`storyflow.plan.registry.scoring_roles`), each local source
    checked on this machine and no weights given twice with the same settings
    (:mod:`storyflow.lm.model_checks`).

    Raises:
        StoryflowError: the first model the config cannot run, named with the fix.
    """
    found = model_specs(config["models"], registry.scoring_roles())
    model_checks.check_models(found, registry.scoring_roles())
    return found


def shared_weights(specs: Mapping[str, ModelSpec]) -> list[str]:
    """One line per two models that run the same weights with other settings (a comparison:
    both run), for the plan's log (:func:`storyflow.lm.model_checks.same_weights`)."""
    return model_checks.same_weights(specs, registry.scoring_roles())


def server_problem(specs: Mapping[str, ModelSpec], name: str) -> str | None:
    """Why nothing answers at served model ``name``'s server (one short request, no retries:
    :func:`storyflow.lm.model_checks.server_problem`), naming its entry ``models[i]``; None
    when something does, or when the model is not served."""
    spec = specs[name]
    if not spec.served:
        return None
    return model_checks.server_problem(spec, f"models[{list(specs).index(name)}]")


def checkpoint_files(spec: ModelSpec) -> list[str]:
    """The files of ``spec``'s checkpoint folder on this machine that decide its scores (rule
    materialize_checkpoint's inputs: one repaired or replaced re-runs the model's jobs); []
    for a hub id or a model that is no checkpoint."""
    if not spec.checkpoint:
        return []
    return list(model_checks.checkpoint_files(str(spec.source["hf"]["id"])))


def weights(spec: ModelSpec) -> str:
    """What a job running ``spec`` in process reads its weights from: its GGUF
    (:data:`WEIGHTS`) or its checkpoint's manifest (:data:`CHECKPOINT`), filled."""
    return fill(CHECKPOINT if spec.checkpoint else WEIGHTS, model=spec.name)


#: Memory (MB) of a job's process beside the weights: Python, pandas, the tokenizer, the
#: logits of a batch.
PROCESS_MB = 2000
#: Minutes a language-model job asks for at its first attempt (an NLL shard: :data:`NLL_MINUTES`).
JOB_MINUTES = 120
NLL_MINUTES = 240
#: Weights in memory per byte on disk, by how a model runs: llama.cpp maps the GGUF as it is;
#: transformers dequantizes a GGUF (about 4.5 bits a weight in Q4_K_M) to float32 (8x) or to 16
#: bits (4x), and reads a checkpoint (stored in 16 bits on the hub as a rule) in float32 (2x) or
#: as stored (1x).
_IN_MEMORY = {
    ("gguf", "llama.cpp"): 1.0,
    ("gguf", "float32"): 8.0,
    ("gguf", "16-bit"): 4.0,
    ("hf", "float32"): 2.0,
    ("hf", "16-bit"): 1.0,
}


def threads(spec: ModelSpec | None) -> int:
    """CPU threads of a job running ``spec`` (its ``device.threads``; 2 for no model)."""
    return 2 if spec is None else int(spec.device["threads"])


def gpus(spec: ModelSpec | None) -> int:
    """GPUs a job running ``spec`` asks for: 1 when the model runs on one, else 0."""
    return int(spec is not None and spec.on_gpu)


def runtime(attempt: int, minutes: int = JOB_MINUTES) -> int:
    """Minutes a job asks for at its ``attempt`` (1, 2, ...): ``minutes`` more each time."""
    return minutes * attempt


def mem_mb(spec: ModelSpec | None, weights: str | None, attempt: int) -> int:
    """Memory (MB) a job running ``spec`` asks for at its ``attempt``: ``device.mem_mb`` if set,
    else the weights in memory (the size of ``weights`` on disk, a GGUF or a checkpoint's
    manifest, times :data:`_IN_MEMORY`) plus :data:`PROCESS_MB`; that much again each retry."""
    if spec is not None and spec.device.get("mem_mb"):
        return int(spec.device["mem_mb"]) * attempt
    weights_mb = 0.0
    if spec is not None and weights is not None and Path(weights).exists():
        if spec.checkpoint:
            from storyflow.lm.weights import checkpoint

            size, kind = checkpoint(weights).bytes, "hf"
        else:
            size, kind = Path(weights).stat().st_size, "gguf"
        precision = "float32" if spec.dtype == "float32" else "16-bit"
        how = "llama.cpp" if spec.backend == "llama.cpp" else precision
        weights_mb = size / 1e6 * _IN_MEMORY[(kind, how)]
    return round(weights_mb + PROCESS_MB) * attempt


#: The model provenance table (rule record_model_provenance).
PROVENANCE = f"{RESULTS}/models.csv"


def in_use(specs: Mapping[str, ModelSpec]) -> list[str]:
    """The models the provenance table lists: those with a role, in config order."""
    return [name for name, spec in specs.items() if spec.roles]


def entries(config: Mapping[str, Any], names: Sequence[str]) -> list[dict[str, Any]]:
    """The validated ``models:`` entries of ``names``, in config order: what the provenance
    table is made from (the whole entry: its source, which a job's scoring settings leave
    out, says where the weights came from)."""
    return [dict(entry) for entry in config["models"] if entry["name"] in names]
