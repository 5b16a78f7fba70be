"""What a job running a model asks a cluster for (storyflow.plan.models) and where the model runs.

Each model's ``device`` block sets its jobs' threads, memory and GPU; memory comes from the
weights on disk unless given; memory and run time grow with Snakemake's attempt. The dry run
checks that every rule that opens an offloaded model asks for a GPU and carries the offload in
its params, and that the former ``nll.n_gpu_layers`` stops the run naming its new place.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import model_entry

from storyflow import plan
from storyflow.errors import StoryflowError
from storyflow.lm.specs import ModelSpec

REPO = Path(__file__).resolve().parents[1]


def spec(**entry: object) -> ModelSpec:
    return ModelSpec.from_config(model_entry(**entry))


def test_memory_follows_the_weights_and_how_they_are_held(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"\0" * 3_000_000)  # 3 MB on disk
    llama = spec()
    assert plan.models.mem_mb(llama, str(gguf), attempt=1) == 3 + plan.models.PROCESS_MB
    assert plan.models.mem_mb(llama, str(gguf), attempt=2) == 2 * (3 + plan.models.PROCESS_MB)
    # transformers dequantizes a GGUF: 8x in float32, 4x in 16 bits
    assert plan.models.mem_mb(spec(backend="transformers"), str(gguf), 1) == 24 + 2000
    assert plan.models.mem_mb(spec(backend="transformers", dtype="bfloat16"), str(gguf), 1) == 2012
    # a checkpoint: its manifest's safetensors bytes, 2x in float32
    manifest = tmp_path / "c.checkpoint.json"
    fields = {"folder": str(tmp_path), "id": "org/m", "revision": None, "commit": "abc"}
    manifest.write_text(json.dumps({**fields, "bytes": 16_000_000}))
    hf = {"source": {"hf": {"id": "org/m"}}}
    assert plan.models.mem_mb(spec(**hf), str(manifest), 1) == 32 + 2000
    assert plan.models.mem_mb(spec(**hf, dtype="float16"), str(manifest), 1) == 16 + 2000
    # given, or no weights (a served model, the embedding judge): no estimate to make
    assert plan.models.mem_mb(spec(device={"mem_mb": 9000}), str(gguf), 2) == 18000
    assert plan.models.mem_mb(None, None, 1) == plan.models.PROCESS_MB


def test_threads_runtime_and_gpu_come_from_the_device_block() -> None:
    cpu, gpu = spec(), spec(device={"n_gpu_layers": -1, "threads": 8})
    assert (plan.models.threads(cpu), plan.models.gpus(cpu)) == (2, 0)
    assert (plan.models.threads(gpu), plan.models.gpus(gpu)) == (8, 1)
    assert plan.models.gpus(None) == 0 and plan.models.threads(None) == 2
    assert [plan.models.runtime(a) for a in (1, 2, 3)] == [120, 240, 360]
    assert plan.models.runtime(2, plan.models.NLL_MINUTES) == 480
    # a served model is never offloaded: its server decides, and a GPU given to it is refused
    served = spec(
        source={"server": {"base_url": "http://x/v1", "model": "m"}},
        roles=["fabula_entropy.reader"],
    )
    assert not served.on_gpu and plan.models.gpus(served) == 0
    with pytest.raises(StoryflowError, match=r"device.n_gpu_layers -1 does not apply: .*served"):
        spec(
            source={"server": {"base_url": "http://x/v1", "model": "m"}},
            roles=["fabula_entropy.reader"],
            device={"n_gpu_layers": -1},
        )


def test_offload_is_a_scoring_setting_only_when_on() -> None:
    from storyflow.lm.connect import job_spec

    cpu = spec()
    assert "n_gpu_layers" not in cpu.scoring_settings()  # CPU runs keep their params
    entry = model_entry(device={"n_gpu_layers": 20, "threads": 4})
    gpu = ModelSpec.from_config(entry)
    assert gpu.scoring_settings()["n_gpu_layers"] == 20
    again = job_spec(gpu.scoring_settings(), [entry])
    assert again.n_gpu_layers == 20 and again.device["threads"] == 4


def test_the_former_nll_key_names_its_new_place(default_config: dict) -> None:
    from storyflow.config_files import schema_problem

    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    assert schema_problem(copy.deepcopy(default_config), schema) is None
    default_config["nll"]["n_gpu_layers"] = -1
    said = schema_problem(copy.deepcopy(default_config), schema)
    assert said is not None and said.startswith("config: nll.n_gpu_layers = -1 moved to ")
    assert "models[].device.n_gpu_layers" in said and "Fix:" in said
    del default_config["nll"]["n_gpu_layers"]
    settings = plan.sequentiality.nll_settings(
        default_config, "hippocorpus", spec(device={"n_gpu_layers": -1})
    )
    assert settings["n_gpu_layers"] == -1


def dry_run_jobs(output: str) -> list[dict[str, str]]:
    """Rule, wildcards and resources of each job a dry run lists."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        resources = re.search(r"\n\s+resources: (.*)", block)
        wildcards = re.search(r"\n\s+wildcards: (.*)", block)
        threads = re.search(r"\n\s+threads: (\d+)", block)
        if rule:
            jobs.append(
                {
                    "rule": rule.group(1),
                    "resources": resources.group(1) if resources else "",
                    "wildcards": wildcards.group(1) if wildcards else "",
                    "threads": threads.group(1) if threads else "1",
                }
            )
    return jobs


def test_an_offloaded_model_asks_for_a_gpu_in_every_job_that_runs_it(
    snakemake, tmp_path: Path
) -> None:
    tiny = yaml.safe_load((Path(__file__).parent / "config" / "tiny.yaml").read_text())
    local = dict(tiny["models"][0], device={"n_gpu_layers": -1, "threads": 4})
    config = tmp_path / "gpu.yaml"
    config.write_text(yaml.safe_dump({"models": [local]}))
    measures = Path(__file__).parent / "config" / "measures.yaml"  # every measure on
    out = snakemake(
        tmp_path / "run", "--dry-run", "--cores", "8", configfiles=[measures, config]
    ).stdout
    jobs = dry_run_jobs(out)
    shards = [j for j in jobs if j["rule"] == "score_nll_shard"]
    assert shards and all("gpu=1" in j["resources"] for j in shards), shards
    assert all("runtime=240" in j["resources"] for j in shards)
    assert all(j["threads"] == "4" for j in shards)  # device.threads
    runs_it = (
        "sample_endings",
        "score_tension_pmi",
        "answer_fabula_questions",
        "detect_plot_holes",
    )
    others = [j for j in jobs if j["rule"] in runs_it]
    assert {j["rule"] for j in others} == set(runs_it), others
    assert all("gpu=1" in j["resources"] and j["threads"] == "4" for j in others), others
    assert not [j for j in jobs if j["rule"] == "read_corpus_stories" and "gpu=1" in j["resources"]]

    # the former key stops the run with one line naming the new one
    old = tmp_path / "old.yaml"
    old.write_text(yaml.safe_dump({"nll": {"n_gpu_layers": -1}}))
    failed = snakemake(tmp_path / "run", "--dry-run", configfiles=[old], check=False)
    assert failed.returncode != 0
    assert re.search(
        r"config: nll\.n_gpu_layers = -1 \(in .*old\.yaml\) moved to "
        r"models\[\]\.device\.n_gpu_layers",
        failed.stdout,
    ), failed.stdout
    assert "Traceback" not in failed.stdout
