"""The language-model layer's tables: NLL terms, the NLL plan and its estimate, and the cost
estimate of every language-model stage.

Units: NLLs in nats per token (natural log); ``n_tokens`` counts the scoring model's tokens;
``history`` is a label, ``"0"`` .. ``"H"`` or ``"full"``."""

from __future__ import annotations

from storyflow.tables.base import Table

#: The columns that identify one term (sentence, model, formulation, history size).
#: The columns of one NLL term (each model, formulation and history cell).
TERM_COLUMNS = {
    "story_id": "object",
    "sentence_idx": "int64",
    "model": "object",
    "formulation": "object",
    "history": "object",
}
#: The labels of a contrast's row (model, formulation and history size it was computed for).
#: The columns naming one (model, formulation, history) cell.
CELL_COLUMNS = {"model": "object", "formulation": "object", "history": "object"}

NLL = Table(
    "NLL",
    {
        **TERM_COLUMNS,
        "n_history": "int64",
        "n_tokens": "int64",
        "nll": "float64",
        "nll_first": "float64",
        "truncated": "bool",
    },
    key=("story_id", "sentence_idx", "model", "formulation", "history"),
    doc="One row per term: nll = mean −ln p of the target sentence's n_tokens tokens (nats/"
    "token) after the requested history (sentences); nll_first = −ln p of its first token "
    "alone (nats; the token that follows the start token, the topic or the previous sentence, "
    "a diagnostic of what the term's first position costs: docs/replication.md); n_history = "
    "sentences actually seen (fewer when truncated to fit the context window).",
)

NLL_COST = Table(
    "NLL cost",
    {
        "story_id": "object",
        "model": "object",
        "formulation": "object",
        "n_sentences": "int64",
        "story_tokens": "int64",
        "longest_sentence": "int64",
        "prefix_tokens": "int64",
        "beyond_window": "bool",
        "passes": "int64",
        "planned_tokens": "int64",
    },
    key=("story_id", "model", "formulation"),
    doc="The planned work of one story and formulation, from token counts alone (model's "
    "tokens): story_tokens = its sentences, prefix_tokens = start token + topic or the chat "
    "prefix, planned_tokens = prefix once + every forward pass's continuation; beyond_window: "
    "prefix + story longer than the context window (some rows truncated).",
)

LM_COST = Table(
    "language-model cost estimate",
    {
        "corpus": "object",
        "measure": "object",
        "stage": "object",
        "model": "object",
        "requests": "int64",
        "prompt_tokens": "int64",
        "generated_tokens": "int64",
        "prompt_rate": "float64",
        "generate_rate": "float64",
        "expected_s": "float64",
        "shrink": "object",
    },
    key=("corpus", "stage", "model"),
    doc="What one language-model stage of a corpus will cost with one model, estimated before "
    "it runs (storyflow.estimate): requests = questions or prompts sent; prompt_tokens = tokens "
    "the model evaluates (words x 1.3); generated_tokens = tokens it writes (upper bounds); "
    "prompt_rate, generate_rate: tokens/s from cost.rates (NaN: none configured); expected_s: "
    "seconds at those rates (NaN without a rate); shrink: the config keys that lower the row. "
    "A judge's row counts every forecaster's endings.",
)

NLL_EXCLUDED = Table(
    "NLL excluded stories",
    {
        "story_id": "object",
        "model": "object",
        "n_sentences": "int64",
        "story_tokens": "int64",
        "longest_sentence": "int64",
        "reason": "object",
    },
    key=("story_id", "model"),
    doc="Stories the NLL stage leaves out for a model (over nll.max_story_tokens, or a sentence "
    "longer than the context window), with the reason and what scoring them would cost.",
)

NLL_ESTIMATE = Table(
    "NLL estimate",
    {
        "model": "object",
        "n_stories": "int64",
        "n_excluded": "int64",
        "passes": "int64",
        "planned_tokens": "int64",
        "tokens_per_second": "float64",
        "expected_seconds": "float64",
    },
    key=("model",),
    doc="The NLL stage of one corpus per model, before it runs: stories to score and left "
    "out, forward passes and tokens planned, and the expected wall time at the configured rate "
    "(NaN without one).",
)

MODEL_PROVENANCE = Table(
    "model provenance",
    {
        "model": "object",
        "family": "object",
        "size": "object",
        "variant": "object",
        "backend": "object",
        "dtype": "object",
        "n_gpu_layers": "int64",
        "source": "object",
        "location": "object",
        "revision": "object",
        "commit": "object",
        "weights": "object",
        "bytes": "float64",
    },
    key=("model",),
    doc="One row per model the run uses: how it ran (backend, dtype, n_gpu_layers: layers on "
    "the GPU, 0 = CPU) and which weights it ran with: source (package, pieces, path, hub, hf "
    "or server), location (package and version, path, hub repo and file, checkpoint id, or "
    "the served model's name), the revision asked for and the hub commit it resolved to "
    "(empty where no hub is involved), the weights' file or folder and their size (bytes; "
    "empty for a served model).",
)
