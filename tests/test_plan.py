"""storyflow.plan: what the workflow runs, decided from the config before any job; and a
corpus of the user's own (kind csv) through the whole sequentiality path."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO

from storyflow import plan
from storyflow.errors import StoryflowError


@pytest.fixture
def config(default_config: dict) -> dict:
    return default_config


def changed(config: dict, **sections: dict) -> dict:
    cfg = copy.deepcopy(config)
    for section, values in sections.items():
        cfg.setdefault(section, {}).update(values)
    return cfg


def test_default_plan(config: dict) -> None:
    assert plan.sequentiality.corpora(config) == ["hippocorpus", "books"]
    assert plan.sequentiality.regressions(config) == (
        ["gain_h1", "raw_h1", "gain_h3", "raw_h3"],
        {},
    )
    assert plan.narrative_sense.sources(config) == ["hanna", "hippocorpus", "rocstories"]
    assert plan.sequentiality.nll_settings(config, "books")["formulations"] == ["context"]
    assert "shards" not in plan.sequentiality.nll_settings(config, "hippocorpus")


def test_regression_config_mistakes_stop_before_any_job(config: dict) -> None:
    with pytest.raises(StoryflowError, match=r"needs covariates\.enabled"):
        plan.sequentiality.regressions(changed(config, covariates={"enabled": False}))
    with pytest.raises(StoryflowError, match="needs covariate window 5"):
        plan.sequentiality.regressions(changed(config, regression={"histories": ["5"]}))
    with pytest.raises(StoryflowError, match="no regression history is scored"):
        plan.sequentiality.regressions(changed(config, nll={"max_history": 0}))
    fitted, skipped = plan.sequentiality.regressions(changed(config, nll={"max_history": 2}))
    assert fitted == ["gain_h1", "raw_h1"]
    assert skipped["gain_h3"] == "history 3 not scored (nll.max_history = 2)"


USER = {
    "mine": {
        "kind": "csv",
        "path": "/data/mine.csv",
        "columns": {"id": "id", "text": "story", "group": "author", "topic": None},
        "contrasts": [{"name": "a_vs_b", "a": "a", "b": "b"}],
    }
}


def test_a_user_corpus_joins_sequentiality_and_narrative_sense(config: dict) -> None:
    cfg = changed(config, narrative_sense={"targets": ["hanna", "mine"]})
    cfg["corpora"] = USER
    assert plan.sequentiality.corpora(cfg) == ["hippocorpus", "books", "mine"]
    assert plan.contrasts.contrasts(cfg, "mine") == USER["mine"]["contrasts"]
    assert "mine" in plan.narrative_sense.sources(cfg)
    settings = plan.narrative_sense.lemma_settings(cfg, "mine")
    assert settings["kind"] == "csv" and settings["columns"] == USER["mine"]["columns"]
    with pytest.raises(StoryflowError, match="unknown corpus 'yours'"):
        plan.narrative_sense.sources(changed(config, narrative_sense={"targets": ["yours"]}))


def user_corpus(tmp_path: Path, hippocorpus: pd.DataFrame) -> Path:
    """Six real HIPPOCORPUS stories as a user's CSV: groups a and b, other column names."""
    rows = hippocorpus[hippocorpus["memType"] == "recalled"].head(6)
    table = pd.DataFrame(
        {
            "id": [f"s{k}" for k in range(6)],
            "story": [" ".join(str(t).split()[:60]) for t in rows["story"]],
            "author": ["a", "a", "a", "b", "b", "b"],
        }
    )
    path = tmp_path / "mine.csv"
    table.to_csv(path, index=False)
    config = tmp_path / "mine.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "books": {"enabled": False},
                "covariates": {"enabled": False},
                "regression": {"enabled": False},
                "stats": {"min_group_size": 3},  # 3 stories a group: tested
                "corpora": {**USER, "mine": {**USER["mine"], "path": str(path)}},
            }
        )
    )
    return config


def test_dry_run_schedules_the_user_corpus(snakemake, hippocorpus, tmp_path: Path) -> None:
    config = user_corpus(tmp_path, hippocorpus)
    result = snakemake(
        tmp_path,
        "-n",
        configfiles=[config],
        targets=["results/mine/sequentiality/tables/effect_sizes.csv"],
    )
    for rule in ("read_csv_corpus", "split_sentences", "score_nll_shard", "compute_effect_sizes"):
        assert rule in result.stdout


def test_a_user_file_in_another_encoding_stops_the_plan_with_one_message(
    snakemake, hippocorpus, tmp_path: Path
) -> None:
    import subprocess

    config = user_corpus(tmp_path, hippocorpus)
    path = tmp_path / "mine.csv"
    path.write_bytes(path.read_bytes() + "s9,Un café.,b\n".encode("cp1252"))
    command = snakemake.command(tmp_path, "-n", configfiles=[config])
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{path}, row 8: the file is not UTF-8 text (byte 0xe9" in out
    assert "Traceback" not in out


@pytest.mark.slow
def test_user_corpus_runs_through_sequentiality(snakemake, hippocorpus, tmp_path: Path) -> None:
    config = user_corpus(tmp_path, hippocorpus)
    snakemake(
        tmp_path,
        "--cores",
        "2",
        configfiles=[config],
        targets=["results/mine/sequentiality/tables/effect_sizes.csv"],
    )
    counts = pd.read_csv(tmp_path / "results/mine/corpus/tables/sample_counts.csv")
    # a CSV corpus's tables name the label as its config does
    assert counts.set_index("group").loc["total", "n_sampled"] == 6
    effects = pd.read_csv(tmp_path / "results/mine/sequentiality/tables/effect_sizes.csv")
    seq = effects[effects["measure"] == "seq"]
    assert set(seq["contrast"]) == {"a_vs_b"}
    assert (seq["n_a"] == 3).all() and (seq["n_b"] == 3).all()
    assert seq["g"].notna().all()


# --- checks before the first job (issue 13, items 4-6) -----------------------------------------


def test_a_config_replacing_models_drops_the_model_names_of_earlier_files(config: dict) -> None:
    """Snakemake replaces `models` but merges measure blocks key by key: a model list named by
    an earlier file must not survive into a file whose `models` lack those models (paper.yaml
    stopped with "plot_holes.surprisal_models names unknown model(s) smollm2-135m-instruct")."""
    default = {"models": [{"name": "small"}], "plot_holes": {"surprisal_models": ["small"]},
               "tension": {"judges": ["small", "embedding"]}}  # fmt: skip
    user = {"models": [{"name": "big"}], "tension": {"judges": ["big", "embedding"]}}
    merged = copy.deepcopy(config)
    merged["models"] = [{"name": "big", "roles": ["plot_holes.surprisal"], "source": {}}]
    merged["plot_holes"]["surprisal_models"] = ["small"]  # from the default, merged
    merged["tension"]["judges"] = ["big", "embedding"]  # the user's own: kept
    reset = plan.merge.resolve_model_references(merged, [default, user, {}])
    assert reset == ["plot_holes.surprisal_models"]
    assert merged["plot_holes"]["surprisal_models"] is None  # the role decides: big
    assert merged["tension"]["judges"] == ["big", "embedding"]
    assert plan.plot_holes.surprisal_models(merged) == ["big"]
    # a file that does not replace models keeps every name of the earlier ones
    kept = copy.deepcopy(merged)
    kept["plot_holes"]["surprisal_models"] = ["small"]
    assert plan.merge.resolve_model_references(kept, [default, {"tension": {"k": 8}}]) == []
    assert kept["plot_holes"]["surprisal_models"] == ["small"]


def test_a_later_config_replaces_an_either_or_choice(config: dict) -> None:
    cfg = copy.deepcopy(config)
    cfg["hippocorpus"]["sample"]["fraction"] = 0.5  # merged over the default's per_type: 9
    default = {"hippocorpus": {"sample": {"per_type": 9, "seed": 2022}}}
    user = {"hippocorpus": {"sample": {"fraction": 0.5}}}
    plan.merge.resolve_alternatives(cfg, [default, user, {}])
    assert cfg["hippocorpus"]["sample"]["fraction"] == 0.5
    assert cfg["hippocorpus"]["sample"]["per_type"] is None
    back = copy.deepcopy(cfg)
    plan.merge.resolve_alternatives(
        back, [default, user, {"hippocorpus": {"sample": {"per_type": 3}}}]
    )
    assert back["hippocorpus"]["sample"]["fraction"] is None
    with pytest.raises(StoryflowError, match="are alternatives: set one of them"):
        plan.merge.resolve_alternatives(
            cfg,
            [default, {"hippocorpus": {"sample": user["hippocorpus"]["sample"] | {"per_type": 3}}}],
        )


def test_contrasts_that_cannot_occur_are_named(config: dict) -> None:
    bad = changed(
        config, hippocorpus={"contrasts": [{"name": "x", "a": "imagine", "b": "recalled"}]}
    )
    with pytest.raises(
        StoryflowError,
        match=r"'imagine', which cannot occur; possible values: recalled, retold, imagined",
    ):
        plan.contrasts.check_contrasts(bad, "hippocorpus")
    books = changed(
        config,
        books={
            "contrasts": [{"name": "y", "a": {"genre": "fiction", "mood": "x"}, "b": "biography"}]
        },
    )
    with pytest.raises(
        StoryflowError, match=r"filters on 'mood'.*label columns: story_type, genre, pov"
    ):
        plan.contrasts.check_contrasts(books, "books", ["fiction", "biography"])
    plan.contrasts.check_contrasts(
        config, "books", ["fiction", "biography", "autobiography", "nonnarrative"]
    )
    with pytest.raises(StoryflowError, match="fiction-2P"):
        plan.contrasts.check_contrasts(
            changed(
                config, books={"contrasts": [{"name": "z", "a": "fiction-2P", "b": "biography"}]}
            ),
            "books",
            ["fiction", "biography"],
        )


def dry_run(snakemake, tmp_path: Path, change: dict, *config: str):
    """A dry run with ``change`` as a config file over the tiny config (must fail)."""
    import json
    import subprocess

    path = tmp_path / "change.yaml"
    path.write_text(json.dumps(change))
    command = snakemake.command(tmp_path / "run", "-n", configfiles=[path])
    if config:
        at = command.index("--config")
        command[at + 1 : at + 2] = list(config)
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_misspelt_mirror_is_named_before_any_job(snakemake, tmp_path: Path) -> None:
    wrong = tmp_path / "shraed" / "data"
    result = dry_run(snakemake, tmp_path, {}, 'data={"mirror": "' + str(wrong) + '"}')
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"is not at {wrong}/hippocorpus/hippocorpus.csv; fix data.mirror" in out
    assert "Traceback" not in out and "download_hippocorpus" not in out


def test_bad_contrast_fails_before_any_nll_job(snakemake, data_mirror, tmp_path: Path) -> None:
    change = {"hippocorpus": {"contrasts": [{"name": "x", "a": "imagine", "b": "recalled"}]}}
    result = dry_run(snakemake, tmp_path, change, 'data={"mirror": "' + str(data_mirror) + '"}')
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "score_nll_shard" not in out
    assert "contrast 'x' of corpus 'hippocorpus'" in out and "Traceback" not in out


def test_a_csv_corpus_without_a_contrast_says_how_to_write_one(
    snakemake, hippocorpus, tmp_path: Path
) -> None:
    """The sequentiality analysis compares groups: a CSV corpus that names no contrast is
    told so before any job, with a contrast over its own groups to paste (never the schema's
    "[] is not allowed", a value the user did not write)."""
    config = user_corpus(tmp_path, hippocorpus)
    cfg = yaml.safe_load(config.read_text())
    del cfg["corpora"]["mine"]["contrasts"]
    config.write_text(yaml.safe_dump(cfg))
    result = dry_run(snakemake, tmp_path, cfg, 'data={"mirror": "/nowhere"}')
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in out, out[-3000:]
    assert "corpus 'mine' (corpora.mine) names no contrast" in out
    assert 'contrasts: [{name: a_vs_b, a: "a", b: "b"}]' in out
    assert "its column 'author' holds the group(s) a, b" in out
    assert "[]" not in out.split("names no contrast")[0]


@pytest.mark.parametrize(
    ("corpus", "contrast", "said"),
    [
        ("hippocorpus", {"name": "x", "a": "imagined", "b": "imagined"}, "are the same stories"),
        ("mine", {"name": "y", "a": {"story_type": ["a", "b"]}, "b": "b"}, "share stories"),
    ],
    ids=["hippocorpus-same-type", "csv-overlapping-groups"],
)
def test_a_contrast_whose_groups_hold_the_same_stories_stops_the_plan(
    snakemake, hippocorpus, tmp_path: Path, corpus: str, contrast: dict, said: str
) -> None:
    """Caught before any job (it was caught by the statistics, after the NLL stage)."""
    config = user_corpus(tmp_path, hippocorpus)
    cfg = yaml.safe_load(config.read_text())
    if corpus == "mine":
        cfg["corpora"]["mine"]["contrasts"] = [contrast]
    else:
        cfg["hippocorpus"] = {"contrasts": [contrast]}
    result = dry_run(snakemake, tmp_path, cfg, 'data={"mirror": "/nowhere"}')
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "score_nll_shard" not in out, out[-3000:]
    assert f"contrast {contrast['name']!r} of corpus {corpus!r}: groups a and b {said}" in out
    assert "Traceback" not in out


def test_a_user_config_switches_the_sample_to_a_fraction(snakemake, tmp_path: Path) -> None:
    change = tmp_path / "fraction.yaml"
    change.write_text("hippocorpus:\n  sample:\n    fraction: 0.01\n")
    snakemake(
        tmp_path,
        "--cores",
        "1",
        configfiles=[change],
        targets=["results/hippocorpus/corpus/stories.parquet"],
    )
    counts = pd.read_csv(tmp_path / "results/hippocorpus/corpus/tables/sample_counts.csv")
    by_type = counts.set_index("story_type")
    for story_type in ("recalled", "imagined", "retold"):
        n = by_type.loc[story_type, "n_in_corpus"] - by_type.loc[story_type, "n_excluded"]
        assert by_type.loc[story_type, "n_sampled"] == round(0.01 * n)


CONFIG_FILES = sorted(p.name for p in (REPO / "config").glob("*.yaml"))


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_every_config_file_plans(name: str, data_mirror: Path, tmp_path: Path) -> None:
    """Each file of config/ plans every step (a dry run, as a user would start it). A file that
    replaces `models` leaves no model name of the default behind (its measures' model lists
    follow the roles of its own models), and a served model is never materialised or scored
    for NLL."""
    import json
    import subprocess
    import sys

    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
        "--directory", str(tmp_path), "-n",
        "--config", "data=" + json.dumps({"mirror": str(data_mirror)}),
    ]  # fmt: skip
    command += ["--configfile", str(REPO / "config" / "config.yaml")]
    if name != "config.yaml":
        command.append(str(REPO / "config" / name))

    def dry_run(*args: str) -> str:
        result = subprocess.run(
            [*command, *args], cwd=REPO, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        return result.stdout

    cfg = yaml.safe_load((REPO / "config" / name).read_text())
    # a GGUF the user supplies (source.path) is checked before any job: absent, the plan stops
    # naming it; a file that begins as a GGUF does lets it plan (materialize_model reads the rest)
    supplied = [m["source"]["path"] for m in cfg.get("models", []) if "path" in m["source"]]
    for path in supplied:
        absent = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert absent.returncode == 1 and f"no such file {tmp_path / path}" in absent.stdout
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(b"GGUF" + bytes(60))
    planned = set(re.findall(r"^(\w+)\s+\d+$", dry_run("--quiet", "rules"), flags=re.M))
    for block, rule in (
        ("tension", "sample_endings"),
        ("fabula_entropy", "answer_fabula_questions"),
        ("plot_holes", "score_plot_holes"),
        ("comparison", "build_story_table"),
    ):
        if (cfg.get(block) or {}).get("enabled"):
            assert rule in planned, f"{name}: {block} is enabled but {rule} is not planned"
    roles = {r for m in cfg.get("models", []) for r in m.get("roles", [])}
    for role, rule in (
        ("plot_holes.detector", "detect_plot_holes"),
        ("plot_holes.maker", "make_model_plot_holes"),
        ("tension.judge", "judge_endings"),
        ("plot_holes.nli", "detect_plot_holes_nli"),
        ("fabula_entropy.reader", "answer_fabula_questions"),
    ):
        if role in roles:
            assert rule in planned, f"{name}: a model has the role {role}; {rule} is not planned"
    assert {"score_nll_shard", "gather_validity"} <= planned
    served = [m["name"] for m in cfg.get("models", []) if "server" in m["source"]]
    if served:
        jobs = dry_run()
        for model in served:
            assert f"resources/models/{model}.gguf" not in jobs
            assert f"nll/{model}" not in jobs


def test_a_corpus_may_not_bear_a_stages_name(config: dict) -> None:
    """results/<corpus>/ of a corpus named like a stage or measure would be that stage's
    results/<stage>/: the name is refused before any job, naming the stages."""
    entry = {"kind": "csv", "path": "x.csv", "columns": {}}
    plan.corpus.check_names(changed(config, corpora={"mine": entry}))
    for name in ("tension", "comparison", "replication", "models"):
        with pytest.raises(StoryflowError, match=rf"corpora names '{name}'.*rename the corpus"):
            plan.corpus.check_names(changed(config, corpora={name: entry}))


def test_the_registry_is_the_one_list_of_measures(config: dict) -> None:
    """Every measure's tables, validity tables and cost settings reach rule all, the validity
    table and the estimate through the registry; an off measure plans nothing."""
    names = plan.registry.names()
    assert names == ["sequentiality", "narrative_sense", "tension", "fabula_entropy", "plot_holes"]
    targets = set(plan.final_outputs(config))
    for measure in plan.registry.MEASURES:
        assert set(measure.final_outputs(config)) <= targets
    # the validity table gathers each measure's own tables, none twice
    files = plan.validity.files(config)
    assert len(files) == len(set(files)) > 0
    assert any("/tension/" in f for f in files) and any("/plot_holes/" in f for f in files)
    assert set(plan.cost.settings(config)["hanna"]) == {"tension", "plot_holes"}
    off = changed(config, tension={"enabled": False})
    assert plan.registry.measure("tension").final_outputs(off) == []
    assert "tension" not in plan.cost.settings(off).get("hanna", {})
    assert not any("/tension/" in p for p in plan.final_outputs(off))
    assert not any("/tension/" in f for f in plan.validity.files(off))
    assert set(plan.validity.files(off)) < set(files)
    with pytest.raises(TypeError, match="lacks OUT, ROLES, enabled, corpora"):
        plan.registry.Measure("sequentiality", "x", plan.layout, "x")


def test_each_settings_record_is_built_from_its_rules_one_params_value(config: dict) -> None:
    """A rule hands its script one settings value from the plan, and the library's record is
    built from it: the corpus's own contrasts in the tension summary (none for HANNA, paired by
    prompt), the cross-fitting of a narrative-sense target that is also a reference, the model
    maker's story types, the passage sample and the figures' size."""
    from storyflow.corpora.books import PassageSampleSettings
    from storyflow.figures.common import FigureSettings
    from storyflow.measures.narrative_sense.threshold import ScoreSettings
    from storyflow.measures.plot_holes.llm_maker import MakerJob
    from storyflow.measures.tension.compare import SummarySettings

    summary = SummarySettings.from_params(plan.tension.summary_settings(config, "hippocorpus"))
    assert list(summary.contrasts) == plan.contrasts.contrasts(config, "hippocorpus") != []
    assert summary.intervals.confidence == config["stats"]["confidence"]
    assert plan.tension.summary_settings(config, "hanna")["contrasts"] == []
    scoring = {c: plan.narrative_sense.score_settings(config, c) for c in ("hippocorpus", "hanna")}
    assert ScoreSettings.from_params(scoring["hippocorpus"]).cross_fitted
    assert not ScoreSettings.from_params(scoring["hanna"]).cross_fitted
    human = changed(config, plot_holes={"originals": "human"})
    assert MakerJob.from_params(plan.plot_holes.maker_job(human, "hanna")).story_types == (
        config["plot_holes"]["human_group"],
    )
    sample = PassageSampleSettings.from_params(plan.corpus.passage_settings(config))
    assert sample.passages.seed == config["books"]["sample"]["seed"]
    assert FigureSettings.from_params(plan.figure_settings(config)).dpi == config["figures"]["dpi"]


@pytest.mark.parametrize(
    ("corpus", "word"), [("mine", "group"), ("hippocorpus", "story type")], ids=["csv", "hippo"]
)
def test_the_same_stories_message_calls_a_csv_corpus_groups_groups(corpus: str, word: str) -> None:
    """A CSV corpus's groups are the values of its group column, not story types: the message
    says "group a", HIPPOCORPUS's says "story type imagined", neither the column story_type."""
    from storyflow.plan.contrasts import check_contrasts

    value = "a" if corpus == "mine" else "imagined"
    contrast = {"name": "x", "a": value, "b": value}
    config = {
        "corpora": {"mine": {"kind": "csv", "columns": {"group": "author"}}},
        "hippocorpus": {"story_types": ["imagined", "recalled"], "contrasts": [contrast]},
    }
    config["corpora"]["mine"]["contrasts"] = [contrast]
    with pytest.raises(StoryflowError) as caught:
        check_contrasts(config, corpus, ["a", "b"])
    message = str(caught.value)
    assert f"groups a and b are the same stories (both take {word} {value})" in message
    assert "story_type" not in message
    config["corpora"]["mine"]["contrasts"] = [{"name": "y", "a": "a", "b": "c"}]
    if corpus == "mine":
        with pytest.raises(StoryflowError, match="group b asks for group 'c', which cannot"):
            check_contrasts(config, corpus, ["a", "b"])
