"""The README's facts that drift (issue 49, item 7): its layout names every page of docs/, and it
states no count of the library's modules or of the default run's jobs (both grow with the code;
the run's time is one record, benchmarks/main_job.md, and the earlier defaults' timings are in
CHANGELOG.md); and docs/cluster.md's one sentence on which jobs request a GPU, against a dry run
(issue 54, item 7). tests/test_docs.py keeps every other page linking that sentence."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import yaml
from conftest import REPO, model_entry

README = (REPO / "README.md").read_text()


def layout() -> str:
    """The README's Layout section: its code block."""
    section = README[README.index("## Layout\n") :]
    return section[section.index("```\n") + 4 : section.index("\n```", section.index("```\n") + 4)]


def test_the_layout_names_every_doc_and_the_changelog() -> None:
    block = layout()
    docs = block[block.index("\ndocs/") :]
    named = set(re.findall(r"\b([a-z_]+\.md)\b", docs))
    pages = {p.name for p in (REPO / "docs").glob("*.md")}
    assert pages - named == set(), f"docs/ pages the README's layout does not name: {pages - named}"
    assert named - {"CHANGELOG.md"} <= pages, named - pages
    assert re.search(r"^CHANGELOG\.md\s", block, re.M)
    for top in ("workflow/Snakefile", "config/", "envs/", "pyproject.toml", "CITATION.cff"):
        assert re.search(rf"^{re.escape(top)}", block, re.M) or f" {top}" in block, top


def test_no_count_of_modules_or_jobs() -> None:
    counts = re.findall(r"\b\d[\d,]*\s+(?:modules|jobs)\b", README)
    assert not counts, f"the README counts modules or jobs, which drift: {counts}"


# --- which jobs request a GPU: docs/cluster.md's one sentence, as the workflow plans it -------

CLUSTER = (REPO / "docs" / "cluster.md").read_text()
#: The bold sentence of docs/cluster.md ("GPU jobs: one recipe") that says which jobs request a GPU.
GPU_SENTENCE = re.compile(r"\*\*(A job requests a GPU .*?)\*\*", re.DOTALL)
#: Claims the README and docs once made that the code does not do (issue 54, item 7).
CONTRADICTIONS = re.compile(
    r"GPU each|every NLL shard (?:requests|asks for) a GPU|shards request a GPU|never NLL scoring",
    re.IGNORECASE,
)


def gpu_sentence() -> str:
    found = GPU_SENTENCE.findall(CLUSTER)
    assert len(found) == 1, f"docs/cluster.md must say once, in bold, which jobs ask: {found}"
    return " ".join(found[0].split())


def test_the_docs_say_which_jobs_request_a_gpu_as_the_workflow_plans_them(
    snakemake, tmp_path: Path
) -> None:
    """A dry run of the tiny config with its CPU model (``n_gpu_layers: 0``) and the same weights
    offloaded (``-1``): only the offloaded model's NLL shards ask for a GPU, which the SLURM
    plugin turns into ``--gpus=1``; a served model asks for none; docs/cluster.md says exactly
    that in one sentence, and the README, which points to it, repeats no other claim."""
    from snakemake_executor_plugin_slurm.utils import set_gres_string
    from test_resources import dry_run_jobs

    from storyflow import plan
    from storyflow.lm.specs import ModelSpec

    sentence = gpu_sentence()
    for said in ("(`--gpus=1`)", "runs its model in process", "(`device.n_gpu_layers` not 0)",
                 "a CPU model (`n_gpu_layers: 0`, the default)", "of a served model request none",
                 "NLL shards included"):  # fmt: skip
        assert said in sentence, f"{said!r} not in docs/cluster.md's sentence: {sentence}"

    tiny = yaml.safe_load((REPO / "tests" / "config" / "tiny.yaml").read_text())
    cpu = dict(tiny["models"][0], device={"n_gpu_layers": 0})
    gpu = dict(tiny["models"][0], name="smollm2-offloaded", roles=["sequentiality"],
               device={"n_gpu_layers": -1})  # fmt: skip
    config = tmp_path / "gpu.yaml"
    config.write_text(yaml.safe_dump({"models": [cpu, gpu]}))
    out = snakemake(tmp_path / "run", "--dry-run", "--cores", "8", configfiles=[config]).stdout
    shards: dict[str, set[bool]] = {}
    for job in dry_run_jobs(out):
        if job["rule"] == "score_nll_shard":
            model = re.search(r"model=([\w.-]+)", job["wildcards"]).group(1)
            shards.setdefault(model, set()).add("gpu=1" in job["resources"])
    assert shards == {cpu["name"]: {False}, gpu["name"]: {True}}, shards

    class Resources(dict):  # a job's resources as the plugin reads them
        __getattr__ = dict.__getitem__

    def sbatch_gpus(gpus: int) -> str:
        return set_gres_string(SimpleNamespace(resources=Resources(gpu=gpus))).strip()

    assert (sbatch_gpus(1), sbatch_gpus(0)) == ("--gpus=1", "")
    served = ModelSpec.from_config(
        model_entry(source={"server": {"base_url": "http://x/v1", "model": "m"}},
                    roles=["sequentiality"])
    )  # fmt: skip
    assert plan.models.gpus(served) == 0

    # the rules the recipe names are those whose jobs can ask for a GPU
    rules = set()
    for path in (REPO / "workflow" / "rules").rglob("*.smk"):
        for block in re.split(r"\n(?=rule \w+:)", path.read_text()):
            if re.search(r"\n\s+gpu=", block) and (rule := re.match(r"rule (\w+):", block)):
                rules.add(rule.group(1))
    recipe = CLUSTER[CLUSTER.index("### GPU jobs: one recipe") :]
    listed = recipe[recipe.index("The rules whose jobs can request one") : recipe.index("**1.")]
    assert set(re.findall(r"`(\w+)`", listed)) == rules

    for name, text in (("README.md", README), ("docs/cluster.md", CLUSTER)):
        found = CONTRADICTIONS.search(text)
        assert not found, f"{name} says {found.group(0)!r}, against: {sentence}"
    assert "docs/cluster.md#gpu-jobs-one-recipe" in README
