"""The story explorer (docs/explorer.md): the data it gathers from a corpus's tables, the page it
writes, and the page in headless Chromium.

The tables below look like a run's: three HIPPOCORPUS-like stories, two sequentiality models
(one story left out of the scores), a tension curve whose judge failed its check, a fabula-entropy
reader that failed, a plot-hole pair with two detectors. The browser tests load the page from a
file:// URL and read the DOM Chromium built (``--dump-dom``) and its screenshot; Chromium's
console is read from its log on stderr.
"""

from __future__ import annotations

import ast
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, sentences_table, validity_check

from storyflow import tables, validity
from storyflow.comparison.story_table import measure_units, story_table
from storyflow.explorer import Sources, gather, render, write
from storyflow.explorer.gather import MILLI, read_sources

CORPUS = "hippocorpus"
GEMMA, SMOL, QWEN = "gemma3-270m", "smollm2-135m-instruct", "qwen2.5-coder-1.5b-instruct"
READER = f"{QWEN}/standard"
SENTENCES = {
    "s1": ["I bought a car.", "It broke down the next day.", "I walked to work for a month."],
    "s2": ["We went to the lake.", "The water was cold.", "Nobody swam.", "We left at noon."],
    "s3": ["My sister </script><b>visited</b>.", "We baked bread."],
}
GROUPS = {"s1": "imagined", "s2": "recalled", "s3": "recalled"}
#: Per story and model, each sentence's NLL without context and with history 1 and full
#: (nats/token), chosen so the shading spans both signs and the whole colour scale.
NLLS = {
    ("s1", GEMMA): ([4.0, 5.2, 4.4], {"1": [4.0, 3.1, 4.9], "full": [4.0, 2.3, 3.2]}),
    ("s1", SMOL): ([4.5, 5.0, 4.1], {"1": [4.5, 4.0, 3.9], "full": [4.5, 3.8, 3.5]}),
    ("s2", GEMMA): (
        [3.0, 4.0, 3.5, 4.2],
        {"1": [3.0, 3.2, 4.6, 3.7], "full": [3.0, 1.1, 4.6, 2.0]},
    ),
    ("s2", SMOL): ([3.3, 4.1, 3.9, 4.0], {"1": [3.3, 3.6, 3.8, 3.1], "full": [3.3, 3.0, 3.7, 2.9]}),
}


def sentence_scores() -> pd.DataFrame:
    """:data:`tables.SENTENCE_SEQUENTIALITY` of :data:`NLLS` (formulation context; s3 left out)."""
    rows = []
    for (story, model), (base, contexts) in NLLS.items():
        for history, context in contexts.items():
            for i, (b, c) in enumerate(zip(base, context, strict=True)):
                n_history = 0 if i == 0 else (i if history == "full" else min(i, int(history)))
                rows.append(
                    tables.SENTENCE_SEQUENTIALITY.row(
                        story_id=story, sentence_idx=i, model=model, formulation="context",
                        history=history, n_history=n_history, truncated=False, nll_base=b,
                        nll_context=c, seq=b - c,
                    )
                )  # fmt: skip
    return tables.SENTENCE_SEQUENTIALITY.frame(rows)


def stories() -> pd.DataFrame:
    return tables.STORIES.frame(
        tables.STORIES.row(
            story_id=s,
            story_type=GROUPS[s],
            text=" ".join(SENTENCES[s]),
            topic="a topic" if s == "s1" else None,
            has_topic=s == "s1",
        )
        for s in SENTENCES
    )


def sentences() -> pd.DataFrame:
    return sentences_table(SENTENCES)


def story_measures() -> list[pd.DataFrame]:
    """Sequentiality (the story mean of sentence sequentiality with the full history), a tension
    no-rate and a model-free narrative-sense score, as the measures hand them over."""
    scores = sentence_scores()
    full = scores[scores["history"] == "full"].groupby(["story_id", "model"])["seq"].mean()
    row = tables.STORY_MEASURES.row
    seq = [
        row(story_id=s, model=m, measure="sequentiality.context", value=v, unit="nats/token")
        for (s, m), v in [*full.items(), *((("s3", m), np.nan) for m in (GEMMA, SMOL))]
    ]
    tension = [
        row(story_id=s, model=SMOL, measure="tension.no_rate.embedding", value=v,
            unit="share of endings (0-1)")
        for s, v in (("s1", 0.5), ("s2", 0.25), ("s3", 0.123456))
    ]  # fmt: skip
    sense = [
        row(story_id=s, model="", measure="narrative_sense.median_pmi", value=v,
            unit="nats (PMI without ln N)")
        for s, v in (("s1", -8.58332), ("s2", -7.1), ("s3", -6.0))
    ]  # fmt: skip
    return [tables.STORY_MEASURES.frame(rows) for rows in (seq, tension, sense)]


def validity_table() -> pd.DataFrame:
    """The embedding judge and the reader fail their checks; the forecaster and the LLM
    detector pass; the surprisal detector fails."""
    rules = validity.RULES
    return validity.frame(
        [
            validity_check(measure="tension", role="forecaster", model=SMOL,
                           name="pairwise_accuracy", value=0.62, ci=(0.55, 0.7), threshold=0.5,
                           rule=rules[1], n=64),
            validity_check(measure="tension", role="judge", model="embedding",
                           name=f"balanced_accuracy[{SMOL}]", value=0.55, ci=(0.45, 0.65),
                           threshold=0.6, n=32),
            validity_check(measure="fabula_entropy", corpus=CORPUS, role="reader", model=READER,
                           name="balanced_accuracy", value=0.64, ci=(0.58, 0.7), threshold=0.7,
                           n=81),
            validity_check(measure="plot_holes", corpus="all", role="detector", model=SMOL,
                           name="auroc", value=0.8, ci=(0.7, 0.9), threshold=0.5, rule=rules[1],
                           n=54),
            validity_check(measure="plot_holes", corpus="all", role="surprisal", model=SMOL,
                           name="auroc", value=0.49, ci=(0.46, 0.51), threshold=0.5,
                           rule=rules[1], n=54),
        ]
    )  # fmt: skip


def verdicts() -> pd.DataFrame:
    return tables.MEASURE_VERDICTS.frame(
        tables.MEASURE_VERDICTS.row(measure=measure, model=model, verdict=verdict, failed=failed)
        for measure, model, verdict, failed in (
            ("narrative_sense.median_pmi", "", "not checked", ""),
            ("sequentiality.context", GEMMA, "not checked", ""),
            ("sequentiality.context", SMOL, "not checked", ""),
            ("tension.no_rate.embedding", SMOL, "failed", "judge embedding balanced_accuracy"),
        )
    )


def fabula_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """s1's original passage and a shuffle of it, two questions each, the reader's answers."""
    original = "\n".join(SENTENCES["s1"])
    shuffled = "\n".join([SENTENCES["s1"][1], SENTENCES["s1"][0], SENTENCES["s1"][2]])
    versions = tables.FEI_VERSIONS.frame(
        tables.FEI_VERSIONS.row(
            story_id="s1", version=version, passage="plot", condition=version, k=k, n_lines=3,
            text=text,
        )
        for version, k, text in (("original", 0, original), ("shuffle", 1, shuffled))
    )  # fmt: skip
    questions = tables.FEI_QUESTIONS.frame(
        tables.FEI_QUESTIONS.row(
            story_id="s1", version=v, passage="plot", kind=kind, question_id=qid, template="t",
            provenance="paper", line=line, word_line=-1, word="", text=text, prior_texts=text,
            truth=truth,
        )
        for v in ("original", "shuffle")
        for kind, qid, line, text, truth in (
            ("etc", "etc-00", 1, "Is Line 2 incompatible with Line 1?", np.nan),
            ("control", "ctl-00", -1, 'Does the word "car" occur in the story?', 1.0),
        )
    )  # fmt: skip
    answers = tables.FEI_ANSWERS.frame(
        tables.FEI_ANSWERS.row(
            story_id="s1", version=v, question_id=q, model=QWEN, variant="standard",
            reader=READER, p_yes=p, p_yes_raw=p, mass=0.98, low_mass=False,
        )
        for v, q, p in (
            ("original", "etc-00", 0.8787),
            ("original", "ctl-00", 0.9),
            ("shuffle", "etc-00", 0.2),
        )
    )  # fmt: skip
    return versions, questions, answers


def plot_hole_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """s2's original (O) and flawed (F) versions, the flaw in line 4 contradicting line 2."""
    flawed = [*SENTENCES["s2"][:3], "We left at midnight."]
    made = tables.PLOT_HOLE_STORIES.frame(
        tables.PLOT_HOLE_STORIES.row(
            story_id="s2", item_id=f"s2:controlled:{version}", maker="controlled",
            version=version, has_error=version == "F", n_sentences=4, sentences=sentences,
            error_lines=error, contr_lines=contr, target_idx=target, attribute_class="time",
            proposition=proposition, original=" ".join(SENTENCES["s2"]), verification="exact",
            provenance="{}",
        )
        for version, sentences, error, contr, target, proposition in (
            ("O", SENTENCES["s2"], [], [], -1, ""),
            ("F", flawed, [4], [2], 3, "noon (sentence 4); line 4 changed"),
        )
    )  # fmt: skip
    answers = tables.PLOT_HOLE_ANSWERS.frame(
        tables.PLOT_HOLE_ANSWERS.row(
            item_id=f"s2:controlled:{v}", story_id="s2", maker="controlled", version=v,
            detector=d, has_error=v == "F", p_error=p, says_error=says, answer="",
            answer_status=status, pred_error=pe, pred_contr=pc, ceeval=ceeval, n_prompt_tokens=0,
        )
        for v, d, p, says, status, pe, pc, ceeval in (
            ("O", SMOL, 0.1234, False, "not_asked", [], [], 1),
            ("F", SMOL, 0.91, True, "ok", [4], [2], 1),
            ("F", f"surprisal:{SMOL}", np.nan, True, "ok", [3], [1], 0),
        )
    )  # fmt: skip
    return made, answers


def sources(**replace: object) -> Sources:
    """The corpus's tables; ``replace`` swaps any of them (None: the measure did not run)."""
    measures = story_measures()
    versions, questions, answers = fabula_tables()
    made, detected = plot_hole_tables()
    all_measures = pd.concat(measures, ignore_index=True)
    fields = {
        "stories": stories(),
        "sentences": sentences(),
        "table": story_table(stories(), sentences(), measures, verdicts()),
        "units": measure_units(all_measures, stories()),
        "verdicts": verdicts(),
        "validity": validity_table(),
        "sentence_scores": sentence_scores(),
        "tension_curves": tables.TENSION_CURVES.frame(
            tables.TENSION_CURVES.row(
                story_id="s1",
                story_type="imagined",
                model=SMOL,
                cut=cut,
                sentence_idx=idx,
                pct=pct,
                judge="embedding",
                n_samples=4,
                n_judged=4,
                n_no=no,
                n_unjudged=0,
                no_rate=no / 4,
                no_rate_judged=no / 4,
            )
            for cut, idx, pct, no in ((0, 0, 0.2, 1), (1, 1, 0.6, 3))
        ),
        "fabula_versions": versions,
        "fabula_questions": questions,
        "fabula_answers": answers,
        "plot_hole_stories": made,
        "plot_hole_answers": detected,
    }
    fields.update(replace)
    return Sources(**fields)  # type: ignore[arg-type]


def seq_of(details: dict, model: str, history: str) -> list[float | None]:
    entry = details["sequentiality"][model]["context"]
    return [
        None if b is None or c is None else (b - c) / MILLI
        for b, c in zip(entry["base"], entry["ctx"][history], strict=True)
    ]


# ---- the data


def test_the_index_holds_every_row_of_the_story_table_rounded() -> None:
    src = sources()
    explorer = gather(CORPUS, src)
    index = explorer.index
    assert index["stories"]["id"] == ["s1", "s2", "s3"]
    assert index["stories"]["group"] == ["imagined", "recalled", "recalled"]
    assert index["stories"]["n_sentences"] == [3, 4, 2]
    names = [m["name"] for m in index["measures"]]
    assert names == [
        "narrative_sense.median_pmi",
        "sequentiality.context",
        "tension.no_rate.embedding",
    ]
    assert index["measures"][2]["unit"] == "share of endings (0-1)"
    rows = index["rows"]
    assert len(rows["story"]) == len(src.table) == 6  # three stories x two models
    for r, (story, model) in enumerate(src.table[["story_id", "model"]].itertuples(index=False)):
        assert index["stories"]["id"][rows["story"][r]] == story
        assert index["models"][rows["model"][r]] == model
        for m, name in enumerate(names):
            value = src.table[name].iloc[r]
            shown = rows["values"][m][r]
            assert (shown is None) if pd.isna(value) else shown == pytest.approx(value, rel=1e-3)
    # 4 significant digits, NaN as null (JSON)
    assert rows["values"][0][0] == -8.583
    assert rows["values"][2][rows["story"].index(2) + 1] == 0.1235
    assert None in rows["values"][1]


def test_a_measure_with_no_value_is_left_out_and_named() -> None:
    """A column empty for every story (the default run's fabula_entropy.etc_hard) is not a
    column of the page; the page names it once. A model-free measure is marked free."""
    measures = story_measures()
    empty = tables.STORY_MEASURES.frame(
        tables.STORY_MEASURES.row(story_id=s, model=SMOL, measure="fabula_entropy.etc_hard",
                                  value=np.nan, unit="bits")
        for s in SENTENCES
    )  # fmt: skip
    table = story_table(stories(), sentences(), [*measures, empty], verdicts())
    units = measure_units(pd.concat([*measures, empty], ignore_index=True), stories())
    index = gather(CORPUS, sources(table=table, units=units)).index
    names = [m["name"] for m in index["measures"]]
    assert "fabula_entropy.etc_hard" not in names and len(index["rows"]["values"]) == 3
    assert index["empty_measures"] == ["fabula_entropy.etc_hard"]
    assert [m["free"] for m in index["measures"]] == [True, False, False]
    assert gather(CORPUS, sources()).index["empty_measures"] == []


def test_failed_cells_are_the_rows_failed_measures() -> None:
    src = sources()
    index = gather(CORPUS, src).index
    tension = [m["name"] for m in index["measures"]].index("tension.no_rate.embedding")
    expected = [
        [r, tension] for r, model in enumerate(src.table["model"]) if model == SMOL
    ]  # the judge failed: every smollm2 row's no-rate, no other cell
    assert sorted(index["failed"]) == expected
    assert index["verdicts"] == [
        {
            "measure": "tension.no_rate.embedding",
            "model": SMOL,
            "failed": "judge embedding balanced_accuracy",
        }
    ]


def test_sentence_nlls_are_thousandths_and_their_difference_is_sequentiality() -> None:
    explorer = gather(CORPUS, sources())
    seq = explorer.index["sequentiality"]
    assert seq == {
        "models": [GEMMA, SMOL],
        "formulations": ["context"],
        "histories": ["1", "full"],
        "story_history": "full",
    }
    s2 = explorer.details[1]
    assert s2["sentences"] == SENTENCES["s2"]
    assert s2["sequentiality"][GEMMA]["context"]["base"] == [3000, 4000, 3500, 4200]
    table = sentence_scores()
    for model in (GEMMA, SMOL):
        for history in ("1", "full"):
            want = table[
                (table["story_id"] == "s2")
                & (table["model"] == model)
                & (table["history"] == history)
            ].sort_values("sentence_idx")["seq"]
            assert seq_of(s2, model, history) == pytest.approx(list(want), abs=2e-3)
    assert "sequentiality" not in explorer.details[2]  # s3 was left out of the scores


def test_curves_answers_and_edits_carry_their_models_verdicts() -> None:
    explorer = gather(CORPUS, sources())
    index = explorer.index
    [curve] = index["tension"]
    assert (curve["model"], curve["judge"], curve["verdict"]) == (SMOL, "embedding", "failed")
    assert "balanced_accuracy" in curve["failed"]
    assert explorer.details[0]["tension"] == [{"curve": 0, "cuts": [[0, 200, 250], [1, 600, 750]]}]
    [reader] = index["readers"]
    assert (reader["reader"], reader["verdict"]) == (READER, "failed")
    verdict_of = {d["detector"]: d["verdict"] for d in index["detectors"]}
    assert verdict_of == {SMOL: "valid", f"surprisal:{SMOL}": "failed"}


def test_passage_lines_are_stored_once_and_answers_per_reader() -> None:
    fei = gather(CORPUS, sources()).details[0]["fabula_entropy"]
    assert fei["lines"] == SENTENCES["s1"]  # the shuffle reuses the original's lines
    assert [v["lines"] for v in fei["versions"]] == [[0, 1, 2], [1, 0, 2]]
    answers = {(q["version"], q["id"]): q["p_yes"] for q in fei["questions"]}
    assert answers == {
        ("original", "etc-00"): [879],
        ("original", "ctl-00"): [900],
        ("shuffle", "etc-00"): [200],
        ("shuffle", "ctl-00"): [None],  # not answered
    }
    truth = {(q["version"], q["id"]): q["truth"] for q in fei["questions"]}
    assert truth[("original", "ctl-00")] == 1 and truth[("original", "etc-00")] is None


def test_plot_hole_versions_reuse_the_story_and_mark_the_changed_line() -> None:
    explorer = gather(CORPUS, sources())
    detectors = [d["detector"] for d in explorer.index["detectors"]]
    original, flawed = explorer.details[1]["plot_holes"]
    assert original["version"] == "O" and original["sentences"] == [0, 1, 2, 3]
    assert original["changed"] == []
    assert flawed["sentences"] == [0, 1, 2, "We left at midnight."]
    assert flawed["changed"] == [3]
    assert (flawed["error_lines"], flawed["contr_lines"]) == ([4], [2])
    by_detector = {detectors[a["detector"]]: a for a in flawed["answers"]}
    assert by_detector[SMOL]["p_error"] == 910 and by_detector[SMOL]["says_error"]
    assert by_detector[SMOL]["pred_error"] == [4] and by_detector[SMOL]["ceeval"] == 1
    assert by_detector[f"surprisal:{SMOL}"]["p_error"] is None  # a score, not a probability
    assert original["answers"][0]["p_error"] == 123


def test_a_corpus_without_a_measure_shows_what_exists() -> None:
    """The books run no tension, HANNA no sequentiality: their parts are left out, not faked."""
    explorer = gather(
        CORPUS,
        sources(
            sentence_scores=None,
            tension_curves=None,
            fabula_versions=None,
            fabula_questions=None,
            fabula_answers=None,
            plot_hole_stories=None,
            plot_hole_answers=None,
        ),
    )
    index = explorer.index
    assert index["sequentiality"] is None
    assert index["tension"] == index["readers"] == index["detectors"] == []
    for details in explorer.details:
        assert set(details) == {"sentences", "topic"}
    assert explorer.details[0]["topic"] == "a topic" and explorer.details[1]["topic"] is None


def test_sources_are_read_through_the_table_definitions(tmp_path: Path) -> None:
    src = sources()
    paths: dict[str, object] = {}
    for name in ("stories", "sentences", "table", "validity"):
        paths[name] = tmp_path / f"{name}.parquet"
        getattr(src, name).to_parquet(paths[name], index=False)
    for name in ("units", "verdicts"):  # CSVs, read with their label columns as text
        paths[name] = tmp_path / f"{name}.csv"
        getattr(src, name).to_csv(paths[name], index=False)
    paths["sentence_scores"] = [tmp_path / "seq.parquet"]
    src.sentence_scores.to_parquet(paths["sentence_scores"][0], index=False)
    paths["tension_curves"] = []
    read = read_sources(paths)
    assert read.tension_curves is None and read.fabula_answers is None
    assert (
        gather(CORPUS, read).index
        == gather(
            CORPUS, sources(tension_curves=None, **dict.fromkeys(FABULA_AND_PLOT_HOLES))
        ).index
    )
    broken = tmp_path / "broken.parquet"
    src.stories.drop(columns=["story_type"]).to_parquet(broken, index=False)
    with pytest.raises(tables.TableError, match="story_type"):
        read_sources({**paths, "stories": broken})


FABULA_AND_PLOT_HOLES = (
    "fabula_versions",
    "fabula_questions",
    "fabula_answers",
    "plot_hole_stories",
    "plot_hole_answers",
)


# ---- the page


def blocks(page: str) -> tuple[dict, list[dict]]:
    """The index and the details as the page holds them."""
    index = re.search(r'<script id="explorer-index" type="application/json">(.*?)</script>', page)
    details = re.search(
        r'<script id="explorer-details" type="text/plain">(.*?)</script>', page, re.S
    )
    assert index and details
    return json.loads(index.group(1)), [json.loads(line) for line in details.group(1).split("\n")]


def test_the_page_is_one_self_contained_file() -> None:
    explorer = gather(CORPUS, sources())
    page = render(explorer)
    assert not re.search(r"<(script|link|img)[^>]*\s(src|href)=", page)
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page
    # a story's own "</script>" cannot end the data block: every "<" in the data is escaped
    assert page.count("</script>") == 3
    index, details = blocks(page)
    assert index == json.loads(json.dumps(explorer.index))
    assert details == json.loads(json.dumps(explorer.details))
    assert details[2]["sentences"][0] == SENTENCES["s3"][0]


def test_nothing_in_the_library_imports_the_explorer() -> None:
    src = REPO / "src" / "storyflow"
    for path in src.rglob("*.py"):
        if "explorer" in path.relative_to(src).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.startswith("storyflow.explorer") for n in names), path


# ---- the page in a browser

CHROMIUM = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> str:
    """Chromium's path. Absent: skipped in a plain run, a failure under ``--full`` (CI installs
    it with ``./install.sh --dev``), so the page is never left untested there."""
    if CHROMIUM is None:
        message = "Chromium is absent: ./install.sh --dev installs it (apt-get install chromium)"
        if request.config.getoption("full"):
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


def chromium(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium (no sandbox: CI runs as root) with its console on stderr."""
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    command += ["--enable-logging=stderr", "--v=0", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def console(result: subprocess.CompletedProcess[str]) -> list[str]:
    """What the page wrote to the console (the explorer writes nothing; an error lands here)."""
    return [line for line in result.stderr.splitlines() if ":CONSOLE" in line]


def attributes(tag: str) -> dict[str, str]:
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag)}


def shown_sentences(dom: str) -> list[dict[str, str]]:
    """The attributes of each sentence span of the selected story's text."""
    return [attributes(tag) for tag in re.findall(r'<span class="sent[^"]*"[^>]*>', dom)]


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "story_explorer.html"
    write(gather(CORPUS, sources()), path)
    return path


def test_the_page_opens_a_story_from_its_url_with_the_tables_numbers(
    browser: str, page: Path
) -> None:
    url = f"{page.as_uri()}#story=s2&model={GEMMA}&formulation=context&h=1"
    result = chromium(browser, "--dump-dom", url)
    dom = result.stdout
    assert console(result) == []
    assert 'data-ready="1"' in dom and "data-errors" not in dom
    assert re.search(r'id="story-title" data-story="s2"', dom)
    spans = shown_sentences(dom)
    assert [int(s["data-idx"]) for s in spans] == [0, 1, 2, 3]
    table = sentence_scores()
    want = table[
        (table["story_id"] == "s2") & (table["model"] == GEMMA) & (table["history"] == "1")
    ].sort_values("sentence_idx")
    assert [float(s["data-seq"]) for s in spans] == pytest.approx(list(want["seq"]), abs=1.5e-3)
    assert [float(s["data-base"]) for s in spans] == pytest.approx(list(want["nll_base"]), abs=1e-3)
    assert [float(s["data-ctx"]) for s in spans] == pytest.approx(
        list(want["nll_context"]), abs=1e-3
    )
    assert "NLL without context 4.00" in spans[1]["title"]
    # the URL's model is the table's: gemma has no no-rate, so its column is left out, said so
    assert '<table id="stories" data-model="gemma3-270m">' in dom
    assert 'data-column="tension.no_rate.embedding"' not in dom
    assert "1 measure column with no value for this model left out" in dom
    # the story's own measures: smollm2's no-rate rests on a failed judge, marked
    assert re.search(r'<tr class="failed-text" data-measure="tension.no_rate.embedding"', dom)
    assert "failed validity check" in dom


def test_the_full_history_mean_is_the_story_tables_sequentiality(browser: str, page: Path) -> None:
    result = chromium(browser, "--dump-dom", f"{page.as_uri()}#story=s1&model={SMOL}")
    dom = result.stdout
    assert console(result) == []
    mean = re.search(r'id="seq-mean" data-mean="([^"]+)"', dom)
    assert mean, "the sentence mean is not shown"
    table = sources().table
    row = table[(table["story_id"] == "s1") & (table["model"] == SMOL)].iloc[0]
    assert float(mean.group(1)) == pytest.approx(row["sequentiality.context"], abs=1.5e-3)
    # the sections of the story: the curve of a failed judge, the reader's answers, s1 has no
    # plot-hole version
    assert "forecaster smollm2-135m-instruct, judge embedding" in dom
    assert "P(yes) qwen2.5-coder-1.5b-instruct/standard" in dom
    assert "No version of this story was made" in dom


def run_in_page(
    browser: str, page: Path, script: str, *, url: str = "", size: tuple[int, int] = (1400, 900)
) -> dict:
    """Run ``script`` in the explorer after it has started (a script added after the page's
    own) and return what it hands to ``report(value)`` (JSON), read from the dumped DOM. The
    script may wait (timers run within Chromium's virtual time budget)."""
    driver = (
        "<script>\nfunction report(value) {"
        " document.documentElement.dataset.result = JSON.stringify(value); }\n"
        f"{script}\n</script>\n"
    )
    driven = page.with_name(f"driven-{abs(hash(script + url))}.html")
    driven.write_text(
        page.read_text(encoding="utf-8").replace("</body>", driver + "</body>"), encoding="utf-8"
    )
    result = chromium(
        browser, "--virtual-time-budget=5000", f"--window-size={size[0]},{size[1]}",
        "--dump-dom", driven.as_uri() + url,
    )  # fmt: skip
    assert console(result) == [] and "data-errors" not in result.stdout
    found = re.search(r'data-result="([^"]*)"', result.stdout)
    assert found, "the driver script reported nothing"
    return json.loads(html.unescape(found.group(1)))


def shown(text: str) -> float:
    """A table cell's number ("\u2013": none; a failed value's mark dropped)."""
    text = text.replace("\u26a0", "").strip()
    return float("nan") if text == "\u2013" else float(text)


def test_the_table_has_one_row_per_story_and_the_model_is_chosen_above_it(
    browser: str, page: Path
) -> None:
    """One row per story; the model above the table (the one with the most values first)
    decides every measure column, and a column with no value for it is left out."""
    script = """
    function table() {
      const columns = [...document.querySelectorAll('#stories th')].map(th => th.dataset.column);
      const rows = [...document.querySelectorAll('#stories tbody tr')].map(tr =>
        [...tr.children].map(td => td.textContent));
      const note = document.getElementById('columns-note').textContent;
      return {columns: columns, rows: rows, note: note};
    }
    const first = table();
    const select = document.getElementById('filter-model');
    select.value = '0';
    select.dispatchEvent(new Event('change'));
    report({first: first, gemma: table(), hash: location.hash});
    """
    got = run_in_page(browser, page, script)
    first, gemma = got["first"], got["gemma"]
    table = sources().table
    # smollm2 has the most values (sequentiality, the no-rate, narrative sense): it opens
    assert first["columns"] == ["story", "group", "sentences", "words",
                                "narrative_sense.median_pmi", "sequentiality.context",
                                "tension.no_rate.embedding"]  # fmt: skip
    assert [r[0] for r in first["rows"]] == ["s1", "s2", "s3"]  # one row per story
    smol = table[table["model"] == SMOL].set_index("story_id")
    for row in first["rows"]:
        story = smol.loc[row[0]]
        assert row[1] == story["story_type"] and int(row[3]) == story["n_words"]
        assert shown(row[5]) == pytest.approx(story["sequentiality.context"], rel=5e-3, nan_ok=True)
        assert row[6].startswith("\u26a0 ")  # the no-rate rests on a failed judge
        assert shown(row[6]) == pytest.approx(story["tension.no_rate.embedding"], rel=5e-3)
    assert first["note"] == ""
    # gemma: its own sequentiality values, no no-rate column, and the URL says so
    assert gemma["columns"][-1] == "sequentiality.context" and len(gemma["columns"]) == 6
    mine = table[table["model"] == GEMMA].set_index("story_id")["sequentiality.context"]
    assert [shown(r[5]) for r in gemma["rows"]] == pytest.approx(list(mine), rel=5e-3, nan_ok=True)
    assert "1 measure column with no value for this model left out" in gemma["note"]
    assert "model=gemma3-270m" in got["hash"]


def test_the_story_id_stays_in_view_when_the_table_scrolls_sideways(
    browser: str, page: Path
) -> None:
    script = """
    const wrap = document.getElementById('table-wrap');
    wrap.scrollLeft = 100000;
    setTimeout(() => {
      const cell = document.querySelector('#stories tbody td.story');
      const last = [...document.querySelectorAll('#stories tbody tr')[0].children].pop();
      report({scrolled: wrap.scrollLeft, wrapLeft: wrap.getBoundingClientRect().left,
              cellLeft: cell.getBoundingClientRect().left,
              lastRight: last.getBoundingClientRect().right,
              wrapRight: wrap.getBoundingClientRect().right});
    }, 50);
    """
    got = run_in_page(browser, page, script, size=(420, 900))
    assert got["scrolled"] > 50, "the narrow table did not scroll: nothing to test"
    assert abs(got["cellLeft"] - got["wrapLeft"]) <= 2  # pinned at the left edge
    assert got["lastRight"] <= got["wrapRight"] + 2  # the last column scrolled into view


def test_the_story_pane_shows_each_value_and_where_it_falls_in_its_group(
    browser: str, page: Path
) -> None:
    """Every measure computed on the story, each model's value with its percentile among the
    stories of its group (scipy's percentileofscore, kind "mean", as the independent check)."""
    from scipy.stats import percentileofscore

    script = """
    report([...document.querySelectorAll('#story-measures tbody tr')].map(tr => ({
      measure: tr.dataset.measure, model: tr.dataset.model, value: Number(tr.dataset.value),
      percentile: tr.dataset.percentile, text: tr.children[3].textContent})));
    """
    got = run_in_page(browser, page, script, url=f"#story=s2&model={GEMMA}")
    table = sources().table
    recalled = table[table["story_type"] == "recalled"]
    expected = []
    for measure in ("narrative_sense.median_pmi", "sequentiality.context",
                    "tension.no_rate.embedding"):  # fmt: skip
        for model in (GEMMA, SMOL):
            mine = recalled[recalled["model"] == model].set_index("story_id")[measure].dropna()
            if "s2" not in mine:
                continue
            free = measure.startswith("narrative_sense")
            if free and model != GEMMA:
                continue  # a score of no model is shown once
            expected.append((measure, "" if free else model, mine["s2"], list(mine)))
    assert [(r["measure"], r["model"]) for r in got] == [(m, mod) for m, mod, _, _ in expected]
    for row, (_, _, value, values) in zip(got, expected, strict=True):
        assert row["value"] == pytest.approx(value, rel=1e-3)
        if len(values) > 1:
            pct = percentileofscore(values, value, kind="mean")
            assert float(row["percentile"]) == pytest.approx(pct, abs=0.01)
            assert row["text"] == f"{round(pct)}th percentile of recalled ({len(values)} stories)"
        else:
            assert row["text"] == "the only story of recalled with a value"


def test_a_hash_changed_on_the_open_page_opens_its_story(browser: str, page: Path) -> None:
    script = """
    const before = document.getElementById('story-title').dataset.story;
    location.hash = '#story=s3&model=SMOL';
    setTimeout(() => report({before: before,
      after: document.getElementById('story-title').dataset.story,
      selected: document.querySelector('#stories tr.selected').dataset.story}), 100);
    """.replace("SMOL", SMOL)
    got = run_in_page(browser, page, script, url="#story=s1")
    assert got == {"before": "s1", "after": "s3", "selected": "s3"}


def test_the_page_fits_a_narrow_frame_and_every_text_is_readable(browser: str, page: Path) -> None:
    """In the report's frame (841 px beside its menu at 1400 px) the charts fit the pane, and
    every text, the shaded sentences included, keeps a contrast of 4.5:1 with its background
    (WCAG AA); a story without a topic shows no "null"."""
    script = """
    function rgb(text) { return text.match(/[\\d.]+/g).slice(0, 4).map(Number); }
    function luminance(c) {
      const l = c.slice(0, 3).map(v => {
        v /= 255;
        return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
      });
      return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
    }
    function background(node) {
      for (; node && node.nodeType === 1; node = node.parentElement) {
        const c = rgb(getComputedStyle(node).backgroundColor);
        if (c.length < 4 || c[3] > 0) return c;
      }
      return [255, 255, 255];
    }
    const worst = [];
    for (const node of document.querySelectorAll('body *')) {
      if (node.closest('svg') || node.disabled || !node.getClientRects().length) continue;
      const own = [...node.childNodes].some(c => c.nodeType === 3 && c.textContent.trim());
      if (!own) continue;
      const a = luminance(rgb(getComputedStyle(node).color)), b = luminance(background(node));
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      const what = node.tagName + '.' + node.className + ': ' + node.textContent.slice(0, 40);
      worst.push([ratio, what]);
    }
    worst.sort((x, y) => x[0] - y[0]);
    const pane = document.getElementById('story-pane');
    const charts = [...document.querySelectorAll('svg.chart')]
      .map(s => s.getBoundingClientRect().right);
    report({worst: worst.slice(0, 3), shaded: document.querySelectorAll('.sent[style]').length,
            charts: charts, right: pane.getBoundingClientRect().right, pane: pane.textContent,
            width: document.documentElement.clientWidth});
    """
    for width in (841, 500):
        got = run_in_page(browser, page, script, url=f"#story=s2&model={GEMMA}&h=full",
                          size=(width, 900))  # fmt: skip
        assert got["shaded"] >= 3
        assert got["worst"][0][0] >= 4.5, f"text below 4.5:1 contrast: {got['worst']}"
        assert got["width"] <= width  # (Chromium's narrowest window is 500 px)
        assert len(got["charts"]) >= 1 and max(got["charts"]) <= got["right"] <= got["width"]
        assert "null" not in got["pane"] and "Topic" not in got["pane"]  # s2 has no topic


def test_a_click_sorts_the_table_and_selects_a_story(browser: str, page: Path) -> None:
    """Clicks driven by a script added after the explorer's: sort by the no-rate (descending:
    two clicks), then open the first row."""
    text = page.read_text(encoding="utf-8")
    driver = (
        "<script>\n"
        "const header = [...document.querySelectorAll('#stories th')]"
        ".find(th => th.textContent.endsWith('no_rate.embedding'));\n"
        "header.click(); document.querySelector('#stories th.sorted-asc').click();\n"
        "document.querySelector('#stories tbody tr').click();\n"
        "</script>\n"
    )
    clicked = page.with_name("clicked.html")
    clicked.write_text(text.replace("</body>", driver + "</body>"), encoding="utf-8")
    result = chromium(browser, "--dump-dom", clicked.as_uri())
    dom = result.stdout
    assert console(result) == []
    assert "sorted-desc" in dom
    # the highest no-rate is s1's (0.5): the first row, now selected
    assert re.search(r'id="story-title" data-story="s1"', dom)
    first = re.search(r"<tbody><tr[^>]*>(.*?)</tr>", dom)
    assert first and 'class="selected"' in dom.split("<tbody>")[1].split("</tr>")[0]
    assert ">s1<" in first.group(1)


def test_the_screenshot_shows_each_sentence_in_its_shade(
    browser: str, page: Path, tmp_path: Path
) -> None:
    """The screenshot of a selected story shows every shade its sentences are given in the DOM,
    each over an area of at least a line of text. The check is exact on colour (a solid
    background is painted with the colour the style names) and loose on layout (fonts differ
    between machines), so it holds on any machine and fails when the shading does not paint."""
    from PIL import Image

    url = f"{page.as_uri()}#story=s2&model={GEMMA}&h=full"
    dom = chromium(browser, "--dump-dom", url).stdout
    shades = {
        tuple(int(c) for c in re.findall(r"\d+", span["style"]))
        for span in shown_sentences(dom)
        if "style" in span
    }
    shades.discard((255, 255, 255))  # the first sentence: no context, sequentiality 0
    assert len(shades) == 3, shades
    shot = tmp_path / "explorer.png"
    chromium(browser, f"--screenshot={shot}", "--window-size=1400,900", url)
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert pixels.shape[:2] == (900, 1400)
    assert pixels.std() > 10, "the page rendered blank"
    for shade in shades:
        area = int(np.all(pixels == np.array(shade, dtype=np.uint8), axis=-1).sum())
        assert area > 300, f"the shade {shade} covers {area} pixels of the screenshot"


def test_the_rules_script_writes_the_page(tmp_path: Path) -> None:
    """scripts/build_story_explorer.py with the rule's inputs as Snakemake hands them (a named
    list; a kind with no file, here the tension curves, is an empty slice)."""
    from types import SimpleNamespace

    from conftest import run_script
    from snakemake.iocontainers import Namedlist

    src = sources()
    inputs = Namedlist()
    for name in ("stories", "sentences", "table", "units", "verdicts", "validity"):
        path = tmp_path / f"{name}.parquet"
        getattr(src, name).to_parquet(path, index=False)
        inputs.append(str(path))
        inputs._add_name(name)
    for name in ("sentence_scores", "tension_curves", *FABULA_AND_PLOT_HOLES):
        start = len(inputs)
        if name != "tension_curves":
            path = tmp_path / f"{name}.parquet"
            getattr(src, name).to_parquet(path, index=False)
            inputs.append(str(path))
        inputs._set_name(name, start, end=len(inputs))
    out = tmp_path / "story_explorer.html"
    run_script(
        "build_story_explorer",
        input=inputs,
        output=SimpleNamespace(page=str(out)),
        wildcards=SimpleNamespace(corpus=CORPUS),
    )
    index, details = blocks(out.read_text(encoding="utf-8"))
    assert index["corpus"] == CORPUS and index["tension"] == []
    assert len(details) == 3 and "sequentiality" in details[0] and "tension" not in details[0]
    assert details[1]["plot_holes"][1]["changed"] == [3]
