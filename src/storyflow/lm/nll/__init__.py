"""The NLL engine: per-sentence negative log-likelihoods for every history size and formulation."""
