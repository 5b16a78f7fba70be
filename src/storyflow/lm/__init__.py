"""The language-model layer, below every measure.

- ``models``: the model registry (typed model specs, defaults applied once) and materialisation;
- ``backends``: llama.cpp (pass by pass and batched), transformers;
- ``prompts``: chat templates of instruct models;
- ``nll``: the NLL engine (pass planning, corpus scoring).
"""
