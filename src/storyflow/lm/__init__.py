"""The language-model layer, below every measure: models that score, write and answer.

- ``specs``: the config's ``models:`` as typed :class:`~storyflow.lm.specs.ModelSpec`s
  (validated entries, ``prompt: auto`` resolved); ``model_checks``: those specs checked against
  this machine before any job;
- ``weights`` and ``weight_files``: a model's weights put on disk, and where they lie;
  ``tokenizer``: its tokenizer without its weights;
- ``backends``: llama.cpp (pass by pass, batched, sampling), transformers and a served model
  (an OpenAI-compatible HTTP client, or a llama.cpp server started for the job), registered by
  name; they know nothing of stories or measures;
- ``prompts``: chat templates of instruct models, plain frames for base models;
- ``nll``: the NLL engine (pass planning, cost, corpus scoring; docs/engine.md);
- ``sampling``: K continuations of one prompt, seeded per sample (docs/lm.md);
- ``answers``: closed-choice answers, the probability of each whole answer string;
- ``connect``: a configured model opened as a sampler or an answerer, whatever its backend;
- ``budget``: a stage's requests and tokens, counted before any model is loaded; ``rates``:
  every model's throughput, with where each rate comes from;
- ``embeddings``: sentence embeddings from an installed model package.
"""
