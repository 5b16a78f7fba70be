"""Alternative language-model backends of the NLL engine (the default, llama.cpp, lives in
``storyflow.scoring``). Each implements the ``storyflow.scoring.Scorer`` protocol."""
