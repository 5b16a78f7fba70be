"""The config's models checked against this machine and against each other, before any job.

Run when the workflow is planned (:func:`storyflow.plan.models.specs`), so that a model the
config cannot run stops the run in seconds, with one message naming the model, the key and the
fix, instead of in its first job (docs/cost_and_failures.md, "Mistakes named before they
cost"):

- **its source on this machine** (:func:`check_source`): a ``source.path`` that is no GGUF file
  here or one cut short (its size against the end of the tensor data its header describes,
  :func:`gguf_cut_short`), and a ``source.hf`` checkpoint folder that is not one (no
  config.json, tokenizer.json or safetensors weights, a weights file cut short, a shard its
  index lists missing); a relative path that does not exist is "no such folder" before any hub
  hint. A served model's tokenizer is checked by :mod:`storyflow.lm.specs` itself. Nothing
  is read but file names, sizes and headers. ``package`` and ``pieces`` sources are checked by rule
  ``materialize_model``, the first job, which runs where the workflow is planned (a local rule):
  they may be installed in the jobs' environment only (conda deployment);
- **the same weights under two names** (:func:`same_weights`): two entries whose sources are
  the same file, package, hub file, checkpoint or served model (every local source resolved to
  its real file or folder, :func:`weights_identity`: a package and a path or link to the
  .gguf it ships are one model), with the same scoring settings
  and a role in common, would run that role's jobs twice for the same numbers; they are
  refused, naming both. With different settings (another prompt, backend, precision or
  device: a comparison) or in different roles (a name per role), both run, and the plan says
  so;
- **a served model's server** (:func:`server_problem`): one request of
  :data:`SERVER_PROBE_SECONDS`, no retries, when the plan has a job for the model
  (workflow/rules/models/common.smk): nothing answering stops a run before any job.

Every model whose source cannot run here is named in one message (:func:`check_models`).

Settings that do not apply to a model's source or backend (``dtype`` on llama.cpp or a server,
``backend`` or a GPU on a served model) are refused by
:meth:`storyflow.lm.specs.ModelSpec.from_config`; ``source.hf.revision`` on a checkpoint
folder here (nothing is downloaded at a revision) by :func:`check_source`.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from storyflow.errors import StoryflowError
from storyflow.lm.specs import ModelSpec

#: The first bytes of a GGUF file.
GGUF_MAGIC = b"GGUF"
#: What a Hugging Face checkpoint folder must hold for storyflow to run it (transformers reads
#: config.json and the safetensors weights; storyflow tokenizes with tokenizer.json).
CHECKPOINT_NEEDS = ("config.json", "tokenizer.json")
#: A sharded checkpoint's index of its weight files.
SAFETENSORS_INDEX = "model.safetensors.index.json"


def _where(name: str, key: str) -> str:
    return f"config: model {name!r}: {key}"


def local_path(value: str) -> Path:
    """A configured path as storyflow reads it: ``~`` expanded, relative to the working
    directory (snakemake --directory)."""
    return Path(value).expanduser()


def checkpoint_folder(model_id: str) -> Path | None:
    """The folder ``source.hf.id`` names on this machine, or None when it is a hub id.

    A path (absolute, ``./``, ``~``, or not of the form ``org/name``) is a folder, whether or
    not it exists; an ``org/name`` that exists here is a folder too, and so is one whose first
    part is a folder here (``checkpoints/smollm2`` beside a ``checkpoints/`` folder: a
    relative path, not the hub's organisation ``checkpoints``)."""
    path = local_path(model_id)
    if path.exists() or path.is_absolute() or model_id.startswith((".", "~")):
        return path
    if model_id.count("/") != 1:
        return path
    first = Path(model_id.split("/", 1)[0])
    return path if first.is_dir() else None


def safetensors_problem(path: Path) -> str | None:
    """Why ``path`` is not a whole safetensors file (its header, then its size against the
    end of the tensor data the header describes), or None when it is one. Reads the header
    only: 8 bytes of length, then the JSON header."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        first = handle.read(8)
        if len(first) < 8:
            return f"{path.name} is {size} bytes, too short for a safetensors header"
        (length,) = struct.unpack("<Q", first)
        if length > size - 8:
            return (
                f"{path.name} is cut short inside its header ({size:,} bytes, the header "
                f"alone needs {8 + length:,})"
            )
        try:
            header = json.loads(handle.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return f"{path.name} is not a safetensors file (its header is not JSON)"
    if not isinstance(header, dict):
        return f"{path.name} is not a safetensors file (its header is not a JSON object)"
    ends = [
        int(entry["data_offsets"][1])
        for key, entry in header.items()
        if key != "__metadata__" and isinstance(entry, dict) and "data_offsets" in entry
    ]
    expected = 8 + length + max(ends, default=0)
    if size < expected:
        return (
            f"{path.name} is cut short: {size:,} bytes, but its header describes tensors "
            f"ending at byte {expected:,} ({size / expected:.0%} present)"
        )
    return None


def checkpoint_problems(folder: Path) -> list[str]:
    """What keeps ``folder`` from being a Hugging Face checkpoint storyflow runs: the files of
    :data:`CHECKPOINT_NEEDS` it lacks, missing or damaged safetensors weights, a config.json
    that is not JSON; [] when it is one."""
    problems = [f"no {name}" for name in CHECKPOINT_NEEDS if not (folder / name).is_file()]
    config = folder / "config.json"
    if config.is_file():
        try:
            json.loads(config.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            problems.append(f"config.json is not JSON ({err})")
    weights = sorted(folder.glob("*.safetensors"))
    index = folder / SAFETENSORS_INDEX
    if index.is_file():
        try:
            listed = set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values())
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, AttributeError) as err:
            problems.append(f"{SAFETENSORS_INDEX} cannot be read ({err})")
            listed = set()
        absent = sorted(f for f in listed if not (folder / f).is_file())
        if absent:
            problems.append(
                f"{len(absent)} of the {len(listed)} weight files its {SAFETENSORS_INDEX} lists "
                f"({', '.join(absent[:3])}{' ...' if len(absent) > 3 else ''})"
            )
    if not weights:
        others = sorted(p.name for p in folder.glob("*.bin")) + sorted(
            p.name for p in folder.glob("*.pt*")
        )
        problems.append(
            "no safetensors weights"
            + (f" (it has {', '.join(others[:3])}: PyTorch pickles, which storyflow does not "
               "load; save the model with save_pretrained, which writes safetensors)"
               if others else "")
        )  # fmt: skip
    for path in weights:
        damaged = safetensors_problem(path)
        if damaged:
            problems.append(damaged)
    return problems


def check_source(spec: ModelSpec) -> None:
    """Stop when ``spec``'s local source is not what its key says, on this machine (module
    docstring). Served, package and pieces sources pass (checked elsewhere).

    Raises:
        StoryflowError: naming the model, the key, what was found and the fix.
    """
    name, source = spec.name, spec.source
    if "path" in source:
        _check_gguf_path(name, str(source["path"]))
    elif "hf" in source:
        _check_checkpoint(name, dict(source["hf"]))


def _check_gguf_path(name: str, value: str) -> None:
    where = _where(name, "source.path")
    path = local_path(value)
    if path.is_dir():
        hint = (
            " It holds a Hugging Face checkpoint (config.json): name the folder in source.hf.id "
            "instead, which the transformers backend runs"
            if (path / "config.json").is_file()
            else ""
        )
        raise StoryflowError(
            f"{where}: {path} is a folder, not a GGUF file: source.path takes the model's "
            f".gguf file.{hint}"
        )
    if not path.is_file():
        raise StoryflowError(
            f"{where}: no such file {path.absolute()} (a relative path is taken from the "
            f"working directory, {Path.cwd()}): give the model's GGUF file, or download it there"
        )
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise StoryflowError(
            f"{where}: {path} is not a GGUF file (it starts with {magic!r}, not b'GGUF': an "
            "HTML page or another format?): download the model's .gguf file again"
        )
    cut = gguf_cut_short(path)
    if cut:
        raise StoryflowError(
            f"{where}: {path} is damaged: {cut}: download or copy the model's .gguf file again"
        )


def gguf_cut_short(path: Path) -> str | None:
    """Why the GGUF file ``path`` is not whole (its size against the end of the tensor data its
    header describes, as for a checkpoint's safetensors), or None when it is whole or its
    header is one this check does not read (rule materialize_model then says why)."""
    from storyflow.lm.weight_files import GgufCutShort, gguf_layout

    size = path.stat().st_size
    try:
        layout = gguf_layout(path)
    except GgufCutShort as err:
        return f"it is cut short inside its header (metadata and vocabulary): only {err.at:,} bytes"
    except (ImportError, ValueError, OverflowError, struct.error):
        return None
    if size < layout.data_end:
        return (
            f"it is cut short: {size:,} bytes, but its header describes {layout.n_tensors} "
            f"tensors ending at byte {layout.data_end:,} ({size / layout.data_end:.0%} present)"
        )
    return None


def _check_checkpoint(name: str, hf: Mapping[str, Any]) -> None:
    where = _where(name, "source.hf")
    model_id, revision = str(hf["id"]), hf.get("revision")
    folder = checkpoint_folder(model_id)
    if folder is None:
        return  # a hub id: fetched by rule materialize_checkpoint at its revision
    if revision is not None:
        raise StoryflowError(
            f"{where}.revision {revision!r} does not apply: {model_id} is a folder on this "
            "machine, not a hub id, so nothing is downloaded at a revision and the revision "
            "would pin nothing (results/models.csv records the folder). Remove revision, or "
            "give the hub id (org/name) to score that commit"
        )
    if folder.is_file():
        raise StoryflowError(
            f"{where}.id: {folder} is a file, not a checkpoint folder: a GGUF file goes in "
            "source.path (run by llama.cpp, or by transformers with backend: transformers)"
        )
    if not folder.is_dir():
        parent = folder.absolute().parent
        there = sorted(p.name for p in parent.iterdir())[:8] if parent.is_dir() else []
        raise StoryflowError(
            f"{where}.id: no such folder {folder.absolute()} (a relative path is taken from "
            f"the working directory, {Path.cwd()})"
            + (f"; {parent} holds: {', '.join(there)}" if there else "")
            + ". Give the checkpoint's folder (config.json, tokenizer.json, safetensors "
            "weights), or a Hugging Face hub id org/name that is no folder here"
        )
    problems = checkpoint_problems(folder)
    if problems:
        raise StoryflowError(
            f"{where}.id: {folder} is not a Hugging Face checkpoint storyflow can run: "
            f"{'; '.join(problems)}. A checkpoint folder holds config.json, tokenizer.json and "
            "safetensors weights, as save_pretrained writes them or `hf download <org/name> "
            "--local-dir <folder>` fetches them"
        )


def _package_file(package: str) -> Path | None:
    """The one .gguf file package ``package`` ships, when it is installed here (None when it is
    not, ships several or assembles its file: checked by rule materialize_model)."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        return None
    ggufs = [f for f in (dist.files or []) if f.suffix == ".gguf"]
    return Path(str(dist.locate_file(ggufs[0]))) if len(ggufs) == 1 else None


def _hub_file(hub: Mapping[str, Any]) -> Path | None:
    """The hub file in the Hugging Face cache here at its revision, or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    try:
        cached = try_to_load_from_cache(
            str(hub["repo"]), str(hub["file"]), revision=str(hub.get("revision") or "main")
        )
    except Exception:  # a malformed repo id: the hub download says so in its job
        return None
    return Path(cached) if isinstance(cached, str) else None


def describe_source(spec: ModelSpec) -> str:
    """A model's source in words, as the config gives it (for messages)."""
    source = spec.source
    if "path" in source:
        return f"file {source['path']}"
    if "package" in source:
        return f"package {source['package']}"
    if "pieces" in source:
        return f"pieces {source['pieces']['package']} (sha256 {source['pieces']['sha256']})"
    if "hub" in source:
        hub = source["hub"]
        return f"hub {hub['repo']} {hub['file']} {hub.get('revision') or 'main'}"
    if "hf" in source:
        revision = source["hf"].get("revision")
        return f"hf {source['hf']['id']}" + (f" {revision}" if revision else "")
    server = source["server"]
    return f"server {str(server['base_url']).rstrip('/')} {server['model']}"


def weights_identity(spec: ModelSpec) -> tuple[str, ...]:
    """What says two entries run the same weights: the real file or folder on this machine
    (links resolved) of every local source (a GGUF path, the .gguf file an installed package
    ships, the joined pieces or the hub file when they are already here, a checkpoint folder),
    so that a package and a path (or a link) to its file are one model; else the package, the
    pieces' SHA-256, the hub file or hub id at its revision, or the server and the model name
    it serves."""
    source = spec.source
    if "path" in source:
        return ("file", os.path.realpath(local_path(str(source["path"]))))
    if "package" in source:
        shipped = _package_file(str(source["package"]))
        if shipped is not None:
            return ("file", os.path.realpath(shipped))
        return ("package", re.sub(r"[-_.]+", "-", str(source["package"])).lower())
    if "pieces" in source:
        from storyflow.lm.weight_files import model_cache

        joined = model_cache() / f"{source['pieces']['sha256']}.gguf"
        if joined.is_file():
            return ("file", os.path.realpath(joined))
        return ("pieces", str(source["pieces"]["sha256"]))
    if "hub" in source:
        hub = source["hub"]
        cached = _hub_file(hub)
        if cached is not None:
            return ("file", os.path.realpath(cached))
        return ("hub", str(hub["repo"]), str(hub["file"]), str(hub.get("revision") or "main"))
    if "hf" in source:
        model_id = str(source["hf"]["id"])
        folder = checkpoint_folder(model_id)
        if folder is not None:
            return ("folder", os.path.realpath(folder))
        return ("hf", model_id, str(source["hf"].get("revision") or "main"))
    server = source["server"]
    return ("server", str(server["base_url"]).rstrip("/"), str(server["model"]))


def _weights_words(first: ModelSpec, other: ModelSpec, identity: tuple[str, ...]) -> str:
    """The weights two models share, in words: their source when both give the same one, else
    each one's source and the file or folder both resolve to."""
    a, b = describe_source(first), describe_source(other)
    if a == b:
        return a
    return f"{first.name}: {a}; {other.name}: {b}; both are the {identity[0]} {identity[1]}"


def same_weights(specs: Mapping[str, ModelSpec], scoring_roles: Collection[str] = ()) -> list[str]:
    """Stop when two models run the same weights with the same scoring settings in a role they
    share (each job of that role would run twice for the same numbers; for one of
    ``scoring_roles``, which score every story's text, a whole NLL stage); the notes (one per
    pair) of the others that run the same weights, for the log: with other settings (a
    comparison), or in other roles (one model named per role). The same weights are found
    through :func:`weights_identity`: a package and a path to its file are the same.

    Raises:
        StoryflowError: naming both models, their weights, the shared roles and the fix.
    """
    groups: dict[tuple[str, ...], list[ModelSpec]] = {}
    for spec in specs.values():
        groups.setdefault(weights_identity(spec), []).append(spec)
    notes = []
    for identity, group in groups.items():
        for i, first in enumerate(group):
            for other in group[i + 1 :]:
                weights = _weights_words(first, other, identity)
                differ = _differences(first, other)
                shared = [role for role in first.roles if role in other.roles]
                if not differ and shared:
                    scoring = [role for role in shared if role in scoring_roles]
                    nll = f" (for {', '.join(scoring)}, a whole NLL stage)" if scoring else ""
                    raise StoryflowError(
                        f"config: models {first.name!r} and {other.name!r} are the same weights "
                        f"({weights}) with the same settings, and both have the role(s) "
                        f"{', '.join(shared)}: each of those jobs would run twice for the same "
                        f"numbers{nll}. Keep one entry with the roles of both ({first.name}: "
                        f"{_roles(first)}; {other.name}: {_roles(other)}), or give each its own"
                    )
                how = f"with different settings ({differ})" if differ else "in different roles"
                notes.append(
                    f"models {first.name!r} and {other.name!r} run the same weights ({weights}) "
                    f"{how}: both are run"
                )
    return notes


def _roles(spec: ModelSpec) -> str:
    return ", ".join(spec.roles) or "no role"


def _differences(a: ModelSpec, b: ModelSpec) -> str:
    """The scoring settings in which ``a`` and ``b`` differ (their names aside), in words."""
    left, right = a.scoring_settings(), b.scoring_settings()
    keys = sorted((set(left) | set(right)) - {"name"})
    return "; ".join(
        f"{key} {left.get(key)!r} vs {right.get(key)!r}"
        for key in keys
        if left.get(key) != right.get(key)
    )


def check_models(specs: Mapping[str, ModelSpec], scoring_roles: Collection[str] = ()) -> list[str]:
    """Every check of this module on the config's models (:func:`check_source` on each, then
    :func:`same_weights`); returns the notes for the log. Every model whose source cannot run
    here is named in one message (a config with several missing files, config/paper.yaml
    before its GGUF files are downloaded, hears of them all at once, not one per dry run)."""
    problems = []
    for spec in specs.values():
        try:
            check_source(spec)
        except StoryflowError as err:
            problems.append(str(err))
    if len(problems) == 1:
        raise StoryflowError(problems[0])
    if problems:
        listed = "\n".join(f"  - {p.removeprefix('config: ')}" for p in problems)
        raise StoryflowError(
            f"config: {len(problems)} models cannot run on this machine; fix each, then run "
            f"again:\n{listed}"
        )
    return same_weights(specs, scoring_roles)


#: Seconds planning waits for a served model's server (:func:`server_problem`): one request,
#: no retries; a job's own requests wait and retry as ``source.server`` says.
SERVER_PROBE_SECONDS = 2.0


def server_problem(spec: ModelSpec, key: str, timeout: float = SERVER_PROBE_SECONDS) -> str | None:
    """Why nothing answers at served model ``spec``'s server, or None when something does.

    One GET of ``<base_url>/models`` within ``timeout`` seconds, no retries: any HTTP answer
    (a 401 or 404 included) is a server listening; no connection or no answer in time is not.
    ``key``: the config entry (``models[3]``) the message names, with the model's name in the
    config (not the name the server knows it by).
    """
    import urllib.error
    import urllib.request

    base_url = str(spec.server["base_url"]).rstrip("/")
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: a server is there (the jobs' requests say the rest)
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err or type(err).__name__
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror
        return (
            f"config: {key} (model {spec.name!r}) is served at {base_url}, but nothing answers "
            f"there (a request to {base_url}/models: {reason}, within {timeout:g} s). Start the "
            f"server first (or correct {key}.source.server.base_url), then run again; its jobs "
            "would otherwise wait for it and fail"
        )


def checkpoint_files(model_id: str) -> Sequence[str]:
    """The files of a checkpoint folder here that decide what it scores (its config, tokenizer
    and weights): rule materialize_checkpoint's inputs, so that a file repaired or replaced
    after a run makes the manifest, and every job that read the checkpoint, run again. [] for a
    hub id (its commit is the manifest's)."""
    folder = checkpoint_folder(model_id)
    if folder is None or not folder.is_dir():
        return []
    patterns = ("config.json", "generation_config.json", "tokenizer*", "*.jinja", "*.safetensors")
    found = {p for pattern in patterns for p in folder.glob(pattern) if p.is_file()}
    index = folder / SAFETENSORS_INDEX
    if index.is_file():
        found.add(index)
    return sorted(str(p) for p in found)
