"""Whether this node can run a model where its config asks: the GPU check made as the model
opens (docs/lm.md, "Where a model runs").

A model's ``device.n_gpu_layers`` (not 0: on the GPU) reaches its jobs' params and the label of
its scores (``n_gpu_layers`` in every table's provenance). Whether a GPU is there can only be
known on the node that runs the job: the workflow is often planned on a cluster's login node,
which has none. So the check is made when a backend opens the model's weights for a use
(:meth:`storyflow.lm.backends.registry.Backend.placed`), before anything is loaded: a node
whose llama.cpp has no GPU device (a CPU build, or no GPU visible) or whose torch has no CUDA
stops the job with one message naming the model, what was asked, what the node has and the
fix, instead of running on the CPU under a GPU label (llama.cpp) or failing with a traceback
after loading the weights (transformers).
"""

from __future__ import annotations

import os
import socket

from storyflow.errors import StoryflowError

#: How to get each backend onto a GPU, for the message.
GPU_BUILDS = {
    "llama.cpp": (
        "a CUDA build of llama-cpp-python (.venv/bin/pip uninstall -y llama-cpp-python, then "
        'CMAKE_ARGS="-DGGML_CUDA=on" ./install.sh; README, "GPU")'
    ),
    "transformers": (
        "a CUDA build of torch (pip install torch --index-url "
        "https://download.pytorch.org/whl/cu126, the build that matches the node's driver)"
    ),
}


def visible_devices() -> str:
    """``CUDA_VISIBLE_DEVICES`` as this process sees it, in words."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    return "unset" if value is None else repr(value)


def gpu_problem(backend: str) -> str | None:
    """What keeps ``backend`` (``llama.cpp`` or ``transformers``) from running on a GPU on this
    node, in words; None when it can."""
    if backend == "llama.cpp":
        import llama_cpp

        if llama_cpp.llama_supports_gpu_offload():
            return None
        return (
            f"its llama.cpp (llama-cpp-python {llama_cpp.__version__}) finds no GPU device: a "
            f"CPU-only build, or no GPU visible (CUDA_VISIBLE_DEVICES {visible_devices()})"
        )
    if backend == "transformers":
        import torch

        if torch.cuda.is_available():
            return None
        if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
            return f"its torch {torch.__version__} is built without CUDA"
        return (
            f"its torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU "
            f"(CUDA_VISIBLE_DEVICES {visible_devices()})"
        )
    return None


def require_gpu(model: str, n_gpu_layers: int, backend: str) -> None:
    """Stop unless this node can run ``model`` on a GPU with ``backend`` (it asks for one:
    ``n_gpu_layers`` is not 0).

    Raises:
        StoryflowError: the model, what it asks, the node and what it has, and the fixes.
    """
    problem = gpu_problem(backend)
    if problem is None:
        return
    raise StoryflowError(
        f"model {model!r} asks for the GPU (device.n_gpu_layers: {n_gpu_layers}, backend "
        f"{backend}), but node {socket.gethostname()} cannot give it one: {problem}. Its "
        "scores would be labelled as offloaded while the CPU computed them, so nothing is "
        "run. Fix: run the model's jobs on a GPU node (the SLURM profile asks for one per "
        f"job: docs/cluster.md), install {GPU_BUILDS[backend]}, or set the model's "
        "device.n_gpu_layers: 0 to score it on the CPU (its jobs then run again, labelled CPU)"
    )
