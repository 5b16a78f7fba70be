"""llama-cpp-python's OpenAI-compatible server on a GGUF, started for this process's own use
(the served-model tests and ``benchmarks/served_nll_determinism.py``; docs/lm.md gives the
command a user runs, ``python -m llama_cpp.server``).

The server needs the packages of llama-cpp-python's ``server`` extra (FastAPI, uvicorn, ...):
:func:`missing_modules` names those not installed; storyflow's ``served`` extra and
``requirements.txt`` carry them (install.sh installs the latter).
"""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from storyflow.errors import StoryflowError

#: The modules ``python -m llama_cpp.server`` imports beyond llama-cpp-python itself (its
#: ``server`` extra: fastapi, uvicorn, sse-starlette, starlette-context, pydantic-settings).
SERVER_MODULES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")


def missing_modules() -> list[str]:
    """The modules of :data:`SERVER_MODULES` (and llama_cpp) this Python cannot import."""
    wanted = ("llama_cpp", *SERVER_MODULES)
    return [name for name in wanted if importlib.util.find_spec(name) is None]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_command(
    gguf: str | Path, *, alias: str, port: int, n_ctx: int, threads: int = 1
) -> list[str]:
    """The command line of the server on ``gguf`` at 127.0.0.1:``port``, named ``alias``: one
    batch of 512 tokens (the in-process default), ``threads`` threads, the logits of every
    token kept (what echoed prompt log-probabilities need)."""
    return [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_batch", "512", "--n_threads", str(threads),
        "--n_threads_batch", str(threads), "--logits_all", "true",
    ]  # fmt: skip


@contextlib.contextmanager
def serve(
    gguf: str | Path, log: str | Path, *, alias: str, n_ctx: int, threads: int = 1,
    wait: float = 120.0,
) -> Iterator[str]:  # fmt: skip
    """The server (:func:`server_command`) on a free port, its output in ``log``; yields its
    base URL (``http://127.0.0.1:<port>/v1``) once it answers, and stops it afterwards.

    Raises:
        StoryflowError: its packages are missing, it exits, or it does not answer in ``wait``
            seconds (the end of its log is in the message).
    """
    missing = missing_modules()
    if missing:
        raise StoryflowError(
            f"llama-cpp-python's server cannot start: {', '.join(missing)} not installed. "
            'Install storyflow\'s served extra (pip install "storyflow[llama,served]") or '
            "requirements.txt (./install.sh does)"
        )
    port = free_port()
    command = server_command(gguf, alias=alias, port=port, n_ctx=n_ctx, threads=threads)
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + wait
        while True:
            if process.poll() is not None:
                raise StoryflowError(f"the server exited: {Path(log).read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise StoryflowError(
                        f"the server did not answer in {wait:.0f} s: "
                        f"{Path(log).read_text()[-3000:]}"
                    ) from None
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
