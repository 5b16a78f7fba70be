"""Hugging Face checkpoints (``source: {hf: ...}``) through the transformers backend.

Offline, on real weights: the packaged SmolLM2-135M-Instruct GGUF is converted once to a Hugging
Face checkpoint folder (transformers reads GGUF and dequantizes it; the folder is what
``save_pretrained`` writes: config.json, model.safetensors, tokenizer.json, the chat template).
The NLL engine then scores stories of the default sample from that folder, and the numbers are
checked against a naive computation (one unbatched forward pass per term), and, through the
workflow, against llama.cpp on the GGUF the folder came from.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow.errors import StoryflowError
from storyflow.lm.backends import padded_batches
from storyflow.lm.specs import ModelSpec
from storyflow.lm.weights import checkpoint, materialize_checkpoint


def hf_entry(**changes: object) -> dict:
    from conftest import model_entry

    return model_entry(**{"source": {"hf": {"id": "org/model"}}, **changes})


def test_a_checkpoint_runs_on_transformers_and_its_revision_is_a_scoring_setting() -> None:
    spec = ModelSpec.from_config(hf_entry())
    assert spec.checkpoint and not spec.served and spec.backend == "transformers"
    gguf = ModelSpec.from_config(hf_entry(source={"path": "m.gguf"}))
    assert gguf.backend == "llama.cpp" and not gguf.checkpoint
    pinned = ModelSpec.from_config(hf_entry(source={"hf": {"id": "org/model", "revision": "abc"}}))
    # another revision is another model: its jobs' params differ, so they re-run
    assert pinned.scoring_settings() != spec.scoring_settings()
    assert pinned.scoring_settings()["hf"] == {"id": "org/model", "revision": "abc"}
    with pytest.raises(StoryflowError, match="only the transformers backend runs"):
        ModelSpec.from_config(hf_entry(backend="llama.cpp"))


def test_a_job_reads_the_checkpoint_back_from_its_params() -> None:
    from storyflow.lm.connect import job_spec

    entry = hf_entry(name="ckpt", source={"hf": {"id": "org/model", "revision": "v1"}})
    spec = ModelSpec.from_config(entry)
    again = job_spec(spec.scoring_settings(), [entry])
    assert again.source == {"hf": {"id": "org/model", "revision": "v1"}}
    assert again.backend == "transformers" and again.prompt == spec.prompt


def test_padded_batches_bound_rows_and_padded_tokens() -> None:
    lengths = [5, 40, 12, 39, 100, 7, 38]
    batches = padded_batches(lengths, n_seq=3, n_batch=120)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) <= 3
        assert len(batch) == 1 or len(batch) * width <= 120
        assert lengths[batch[0]] == width  # longest first
    # the 100-token sequence fits no second row; 40, 39 and 38 pad to 40 x 3 = 120 tokens (n_seq
    # rows); 12, 7 and 5 pad to 12 x 3
    assert batches == [[4], [1, 3, 6], [2, 5, 0]]
    assert padded_batches([300], n_seq=4, n_batch=64) == [[0]]  # too long: alone


def test_a_folder_without_weights_or_tokenizer_is_named(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(StoryflowError, match=r"cannot be run: no tokenizer\.json; no safetensors"):
        materialize_checkpoint("m", {"hf": {"id": str(tmp_path)}}, tmp_path / "m.json")
    with pytest.raises(StoryflowError, match=r"no such folder .*absent on this machine"):
        materialize_checkpoint("m", {"hf": {"id": str(tmp_path / "absent")}}, tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


def test_an_unreachable_hub_checkpoint_says_what_to_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    source = {"hf": {"id": "HuggingFaceTB/SmolLM2-135M", "revision": None}}
    with pytest.raises(StoryflowError) as err:
        materialize_checkpoint("smol", source, tmp_path / "smol.json")
    message = str(err.value)
    assert "model 'smol': source.hf" in message
    assert "hf download HuggingFaceTB/SmolLM2-135M --local-dir <folder>" in message


def default_stories(hippocorpus_csv: Path, nlp, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first ``n`` stories of each type of the default config's sample (9 per type, seed
    2022), and their sentences."""
    from storyflow.corpora.hippocorpus import read_hippocorpus, sample_stories
    from storyflow.sentences import split_sentences

    stories, _ = read_hippocorpus(hippocorpus_csv, ["imagined", "recalled", "retold"])
    sample = sample_stories(stories, per_type=9, seed=2022).groupby("story_type").head(n)
    return sample[["story_id", "topic"]], split_sentences(sample[["story_id", "text"]], nlp)


@pytest.mark.slow
def test_the_manifest_records_the_folder(smollm2_checkpoint: Path) -> None:
    made = checkpoint(smollm2_checkpoint)
    assert Path(made.folder).is_dir() and made.commit is None and made.revision is None
    assert made.bytes > 400e6  # 135M parameters in float32
    assert json.loads(smollm2_checkpoint.read_text())["folder"] == made.folder


@pytest.mark.slow
def test_a_checkpoint_scores_as_a_naive_computation(smollm2_checkpoint: Path, nlp) -> None:
    import torch
    from conftest import HIPPOCORPUS_CSV, defaults, nll_model
    from transformers import AutoModelForCausalLM

    from storyflow.lm.nll.engine import NllSettings, plan_corpus, run_corpus

    stories, sentences = default_stories(HIPPOCORPUS_CSV, nlp, n=1)
    stories = stories.head(2)  # an imagined and a recalled story of the default sample
    block = defaults("nll", max_history=2, n_seq=8, n_batch=4096)
    settings = NllSettings.from_config(block, threads=2)
    model = nll_model(
        "smollm2-hf", smollm2_checkpoint, settings, prompt="chat", backend="transformers"
    )
    run = run_corpus(model, stories, sentences, settings)
    nll = run.nll.set_index(["story_id", "formulation", "sentence_idx", "history"])
    assert len(nll) == len(run.nll) > 100

    # naive: one unbatched pass per term over the plan's own tokens, in float32. The engine
    # scored every term in its batches; the naive pass checks one history per sentence, turning
    # through the four (sentence i of a story's formulation k gets label (i + k) mod 4), so that
    # every sentence position, history and formulation is checked at a quarter of the passes
    plan = plan_corpus(model, stories, sentences, settings)
    folder = json.loads(smollm2_checkpoint.read_text())["folder"]
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    labels = ("0", "1", "2", "full")
    gaps, checked = [], set()
    for story in plan.stories:
        for k, formulation in enumerate(story.formulations(settings.formulations)):
            prefix = story.prefix(formulation, plan.start)
            for i, target in enumerate(story.sentences):
                label = labels[(i + k) % len(labels)]
                first = 0 if label == "full" else max(0, i - int(label))
                context = [t for s in story.sentences[first:i] for t in s]
                ids = torch.tensor([[*prefix, *context, *target]])
                with torch.inference_mode():
                    logits = model(input_ids=ids).logits[0].float()
                at = len(prefix) + len(context) - 1
                lp = torch.log_softmax(logits[at : at + len(target)], -1)
                naive = -lp.gather(1, torch.tensor(target)[:, None]).mean().item()
                row = nll.loc[(story.story_id, formulation, i, label)]
                gaps.append(abs(row["nll"] - naive))
                checked.add((formulation, label))
    assert checked == {(f, label) for f in settings.formulations for label in labels}
    # float32 both ways; what differs is the batch's matrix shapes (padded rows) and the order
    # of the sums in them: measured max 6.0e-6 nats/token when every term was checked
    print(f"checkpoint engine vs naive: max |diff| {max(gaps):.2e} nats/token over {len(gaps)}")
    assert max(gaps) <= 1e-5


@pytest.mark.slow
def test_a_packed_shard_repeats_bit_for_bit_and_equals_one_story_batches(
    smollm2_checkpoint: Path, nlp
) -> None:
    """The transformers backend packs a shard's passes across stories (n_seq > 1): the same
    shard gives the same numbers bit for bit; one story's passes per batch, or the stories in
    another shard, give them within float32 arithmetic on matrices of other shapes."""
    from conftest import HIPPOCORPUS_CSV, defaults, nll_model

    from storyflow import tables
    from storyflow.lm.nll.engine import (
        NllSettings,
        plan_corpus,
        run_corpus,
        score_story,
        story_rows,
    )

    def keyed(table: pd.DataFrame) -> pd.DataFrame:
        keys = ["story_id", "formulation", "sentence_idx", "history"]
        return table.set_index(keys).sort_index()

    stories, sentences = default_stories(HIPPOCORPUS_CSV, nlp, n=1)  # one story per type
    block = defaults("nll", max_history=2, n_seq=8, n_batch=2048)
    settings = NllSettings.from_config(block, threads=2)
    model = nll_model(
        "smollm2-hf", smollm2_checkpoint, settings, prompt="chat", backend="transformers"
    )
    packed = keyed(run_corpus(model, stories, sentences, settings).nll)
    again = keyed(run_corpus(model, stories, sentences, settings).nll)
    assert packed.equals(again)  # bit for bit
    plan = plan_corpus(model, stories, sentences, settings)
    scorer = model.scorer(n_ctx=plan.n_ctx, n_seq=settings.n_seq, n_batch=settings.n_batch)
    rows = []
    for story in plan.stories:  # one story's passes per call: batches never mix stories
        terms = score_story(scorer, story, settings.formulations, plan.start, 2, plan.n_ctx)
        for formulation, story_terms in terms.items():
            rows += story_rows(story, story_terms, model.name, formulation, 2)
    alone = keyed(tables.NLL.frame(rows))
    fewer = keyed(run_corpus(model, stories.head(2), sentences, settings).nll)
    assert alone.drop(columns=["nll", "nll_first"]).equals(
        packed.drop(columns=["nll", "nll_first"])
    )
    gap = (packed["nll"] - alone["nll"]).abs()
    moved = (packed.loc[fewer.index, "nll"] - fewer["nll"]).abs()
    print(
        f"packed vs one story per batch: max |diff| {gap.max():.2e}, mean {gap.mean():.2e} "
        f"nats/token, {int((gap == 0).sum())}/{len(gap)} identical; in a shard of 2 stories "
        f"instead of 3: max {moved.max():.2e}, {int((moved == 0).sum())}/{len(moved)} identical"
    )
    assert gap.max() <= 1e-5 and moved.max() <= 1e-5
    assert (packed["nll_first"] - alone["nll_first"]).abs().max() <= 1e-4


@pytest.mark.slow
def test_the_workflow_scores_a_checkpoint_as_it_scores_the_gguf(
    smollm2_checkpoint: Path, tiny_run: Path, snakemake, tmp_path: Path
) -> None:
    """The tiny run's stories, scored again by a model whose source is the checkpoint folder:
    rule materialize_checkpoint writes its manifest, the NLL rules read it (plan_nll for the
    tokens, score_nll_shard for the weights; one shard is asked for, its stories a quarter of
    the run's, since gathering shards does not depend on the source), and the NLLs are the
    GGUF's within the difference of the two backends' arithmetic: llama.cpp quantizes
    activations to 8 bits for its Q4 matrix products and keeps its KV cache in float16,
    transformers computes in float32 on the same (dequantized) weights (test_backends.py).
    Measured on every shard: r = 0.99976, mean |diff| 0.022 nats/token."""
    import shutil

    import yaml

    from storyflow.plan.layout import fill
    from storyflow.plan.sequentiality import NLL, NLL_SHARD

    folder = checkpoint(smollm2_checkpoint).folder
    workdir = tmp_path / "run"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    config = tmp_path / "hf.yaml"
    entry = {"name": "smollm2-hf", "variant": "instruct", "source": {"hf": {"id": folder}}}
    config.write_text(yaml.safe_dump({"models": [entry]}))
    target = fill(NLL_SHARD, corpus="hippocorpus", model="smollm2-hf", shard="000")
    ran = snakemake(workdir, "--cores", "2", configfiles=[config], targets=[target]).stdout
    assert "rule materialize_checkpoint" in ran and "rule materialize_model" not in ran
    assert "rule plan_nll" in ran
    manifest = json.loads((workdir / "resources/models/smollm2-hf.checkpoint.json").read_text())
    assert manifest["folder"] == folder and manifest["commit"] is None
    ours = pd.read_parquet(workdir / target)
    gguf = pd.read_parquet(workdir / fill(NLL, corpus="hippocorpus", model="smollm2-135m-instruct"))
    keys = ["story_id", "sentence_idx", "formulation", "history"]
    joined = ours.merge(gguf, on=keys, suffixes=("", "_gguf"))
    assert len(joined) == len(ours) > 50 and set(ours["story_id"]) < set(gguf["story_id"])
    assert (joined["n_tokens"] == joined["n_tokens_gguf"]).all()  # the same token ids
    r = np.corrcoef(joined["nll"], joined["nll_gguf"])[0, 1]
    mad = (joined["nll"] - joined["nll_gguf"]).abs().mean()
    print(f"workflow: checkpoint vs GGUF r = {r:.5f}, mean |diff| = {mad:.4f} nats/token")
    assert r >= 0.995 and mad <= 0.05, (r, mad)
