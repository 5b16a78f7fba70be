"""The diagnostic variants of the NLL terms (storyflow.measures.sequentiality.variants): the
first token left out of every term, and the unconditional term without its leading space."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import nll_model

from storyflow import tables
from storyflow.lm.nll.engine import NllSettings, score_corpus
from storyflow.measures.sequentiality import variants


def _terms(rows: list[tuple[str, int, str, str, int, float, float]]) -> pd.DataFrame:
    """NLL rows from (story, sentence, formulation, history, n_tokens, nll, nll_first)."""
    return tables.NLL.frame(
        [
            tables.NLL.row(
                story_id=s,
                sentence_idx=i,
                model="m",
                formulation=f,
                history=h,
                n_history=0 if h == "0" else 1,
                n_tokens=n,
                nll=nll,
                nll_first=first,
                truncated=False,
            )
            for s, i, f, h, n, nll, first in rows
        ]
    )


def test_leaving_the_first_token_out_averages_the_other_tokens() -> None:
    # 4 tokens of mean 2.0 (sum 8), the first cost 5: the other three average 1.0
    nll = _terms(
        [
            ("a", 0, "context", "0", 4, 2.0, 5.0),
            ("a", 1, "context", "1", 3, 1.5, 1.5),
            ("a", 2, "context", "0", 1, 7.0, 7.0),  # one token: nothing left
        ]
    )
    out = variants.without_first_token(nll)
    assert out["nll"].iloc[0] == pytest.approx(1.0)
    assert out["nll"].iloc[1] == pytest.approx(1.5)
    assert np.isnan(out["nll"].iloc[2]) and out["nll_first"].isna().all()
    assert list(out.columns) == tables.NLL.names


def test_the_unconditional_terms_replace_every_context_only_term_without_history() -> None:
    nll = _terms(
        [
            ("a", 0, "context", "0", 4, 2.0, 5.0),
            ("a", 0, "context", "1", 4, 2.0, 5.0),  # the first sentence: no history at h = 1
            ("a", 1, "context", "0", 4, 2.2, 5.0),
            ("a", 1, "context", "1", 4, 1.8, 4.0),
            ("a", 0, "topic", "0", 4, 2.5, 6.0),
        ]
    ).assign(n_history=[0, 0, 0, 1, 0])
    bare = _terms([("a", 0, "context", "0", 3, 1.2, 2.0), ("a", 1, "context", "0", 3, 1.4, 2.0)])
    out = variants.with_unconditional(nll, bare)
    assert out["nll"].tolist() == [1.2, 1.2, 1.4, 1.8, 2.5]
    assert out["n_tokens"].tolist() == [3, 3, 3, 4, 4]
    assert list(out.columns) == tables.NLL.names
    with pytest.raises(ValueError, match="no rescored counterpart"):
        variants.with_unconditional(nll, bare.iloc[:1])


@pytest.mark.slow
def test_the_spaced_unconditional_term_is_the_engines_and_the_bare_one_differs(
    packaged_models: dict[str, Path], tmp_path: Path
) -> None:
    """Scored one pass per sentence with its leading space, the unconditional term equals the
    engine's context-only h = 0 term (SmolLM2: passes agree to 1e-6, tests/test_nll_engine.py);
    without the space the target's tokens differ, and so does its NLL."""
    texts = ["The dog barked at the mailman.", "Then it slept.", "I laughed."]
    sentences = pd.DataFrame({"story_id": "s", "sentence_idx": range(3), "text": texts})
    stories = pd.DataFrame({"story_id": ["s"], "topic": [None]})
    block = {
        "max_history": 1, "formulations": ["context"], "max_context_tokens": 512,
        "n_gpu_layers": 0, "n_batch": None, "n_seq": 1, "max_story_tokens": None,
        "beyond_window": "longest",
    }  # fmt: skip
    path = packaged_models["smollm2"]
    settings = NllSettings.from_config(block, 2)
    engine = score_corpus(nll_model("m", path, settings), stories, sentences, settings)
    engine = engine[engine["history"] == "0"].reset_index(drop=True)
    spaced = variants.score_unconditional("m", path, sentences, prompt="plain", spaced=True)
    bare = variants.score_unconditional("m", path, sentences, prompt="plain", spaced=False)
    assert np.abs(spaced["nll"] - engine["nll"]).max() < 1e-6
    assert np.abs(spaced["nll_first"] - engine["nll_first"]).max() < 1e-6
    assert (spaced["n_tokens"] == engine["n_tokens"]).all()
    assert (np.abs(bare["nll"] - spaced["nll"]) > 1e-3).all()
