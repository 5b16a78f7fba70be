"""The language-model layer, below every measure: models that score, write and answer.

- ``registry``: the config's ``models:`` as typed :class:`~storyflow.lm.registry.ModelSpec`s
  (validated entries, ``prompt: auto`` resolved); ``weights``: putting a model's GGUF weights
  on disk;
- ``backends``: llama.cpp (pass by pass, batched, sampling), transformers, an OpenAI-compatible
  HTTP client; they know nothing of stories or measures;
- ``prompts``: chat templates of instruct models, plain frames for base models;
- ``nll``: the NLL engine (pass planning, cost, corpus scoring; docs/engine.md);
- ``sampling``: K continuations of one prompt, seeded per sample (docs/lm.md);
- ``answers``: closed-choice answers, the probability of each whole answer string;
- ``connect``: a configured model opened as a sampler or an answerer, whatever its backend.
"""
