"""A model's tokenizer without its weights: token ids, special tokens and the chat template.

Two kinds, one interface (:class:`Tokenizer`):

* :class:`GgufTokenizer`: a GGUF file loaded by llama.cpp with ``vocab_only`` (the local models,
  and a served model whose GGUF is on this machine);
* :class:`HfTokenizer`: a Hugging Face tokenizer folder, as vLLM serves a model from:
  ``tokenizer.json`` read by the ``tokenizers`` library; ``tokenizer_config.json`` for the chat
  template, the ``bos_token`` and ``eos_token`` texts and ``add_bos_token``; the template may
  also be in ``chat_template.jinja`` (newer transformers write it there) and the trained context
  in ``config.json``. No torch, no transformers.

A served model's ``source.server.tokenizer`` may name either (:func:`tokenizer_source` tells
which), or a Hugging Face hub id ``org/name`` (optionally ``org/name@revision``) whose tokenizer
files are fetched into the Hugging Face cache (:func:`hub_folder`).

Both kinds count the same way (:func:`storyflow.lm.prompts.prompt_tokens`): ``encode`` gives a
text's ids without any token added; ``special`` parses special-token texts such as
``<|im_start|>`` (as llama.cpp's ``special=True`` and the ``tokenizers`` library's default; off,
they are ordinary text); :attr:`Tokenizer.bos_added` is the token the tokenizer puts before a
text, if any. Chat templates are rendered by :mod:`storyflow.lm.prompts` from
:attr:`Tokenizer.chat_template` and :meth:`Tokenizer.specials`, the same for both kinds.
"""

from __future__ import annotations

import json
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storyflow.errors import StoryflowError

#: What a served model's ``tokenizer`` names: a GGUF file, a Hugging Face folder, a hub id.
KINDS = ("gguf", "folder", "hub")
#: The files fetched for a hub id (the first is required; the others are read where present).
HUB_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "config.json")
#: A Hugging Face repository id (``org/name``), optionally ``@revision``.
HUB_ID = re.compile(r"^([A-Za-z0-9][\w.-]*/[\w.-]+)(?:@([\w./-]+))?$")
#: transformers' ``model_max_length`` when a tokenizer has none (int(1e30)): not a length.
_NO_LENGTH = 10**9


class Tokenizer(ABC):
    """A model's vocabulary, special tokens and chat template (no weights).

    ``source``: where it was read (for messages)."""

    source: str

    @abstractmethod
    def encode(self, text: str, *, special: bool = False) -> list[int]:
        """Token ids of ``text``, nothing added; ``special``: special-token texts are parsed."""

    @abstractmethod
    def decode(self, ids: Sequence[int], *, special: bool = False) -> str:
        """The text of ``ids``, special tokens left out (``special``: written out)."""

    @abstractmethod
    def piece(self, token: int) -> str:
        """The text token ``token`` adds after other text (a leading space included; empty for
        a special token): what a server lists as the token's text."""

    @property
    @abstractmethod
    def chat_template(self) -> str | None:
        """The model's chat template (jinja2 source), None when it has none."""

    @abstractmethod
    def specials(self) -> dict[str, str]:
        """The special-token texts chat templates use: ``bos_token`` and ``eos_token`` ("" when
        the model has none)."""

    @property
    @abstractmethod
    def bos_added(self) -> int | None:
        """The id the tokenizer puts before a text (its BOS), None when it adds none."""

    @property
    @abstractmethod
    def context_length(self) -> int | None:
        """The model's trained context in tokens, None when unknown."""

    @property
    def template_source(self) -> str:
        """Where :attr:`chat_template` is read from (for messages)."""
        return self.source


class GgufTokenizer(Tokenizer):
    """The tokenizer of a GGUF file: a llama-cpp-python ``Llama`` loaded with ``vocab_only``.

    ``llm``: that ``Llama`` (:meth:`load` opens one from a path)."""

    def __init__(self, llm: Any, source: str = "GGUF") -> None:
        self.llm = llm
        self.source = source

    @classmethod
    def load(cls, path: str | Path) -> GgufTokenizer:
        """The tokenizer of the GGUF at ``path`` (only its vocabulary and metadata are read)."""
        from storyflow.lm.backends.llama_cpp import VocabOnly

        return cls(VocabOnly(path).llm, str(path))

    def encode(self, text: str, *, special: bool = False) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=special))

    def decode(self, ids: Sequence[int], *, special: bool = False) -> str:
        text = self.llm.detokenize(list(ids), special=special)
        return text.decode("utf-8", errors="replace")

    def piece(self, token: int) -> str:
        return self.decode([token])

    @property
    def chat_template(self) -> str | None:
        return self.llm.metadata.get("tokenizer.chat_template") or None

    @property
    def template_source(self) -> str:
        return "GGUF tokenizer.chat_template"

    def specials(self) -> dict[str, str]:
        def text(token: int) -> str:
            if token < 0:
                return ""
            return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

        return {"bos_token": text(self.llm.token_bos()), "eos_token": text(self.llm.token_eos())}

    @property
    def bos_added(self) -> int | None:
        """GGUF ``tokenizer.ggml.add_bos_token`` (true when absent) and a BOS id."""
        adds = str(self.llm.metadata.get("tokenizer.ggml.add_bos_token", "true")).lower() == "true"
        bos = int(self.llm.token_bos())
        return bos if adds and bos >= 0 else None

    @property
    def context_length(self) -> int | None:
        from storyflow.lm.backends.llama_cpp import training_context

        value = training_context(self.llm)
        return value if value < 2**31 - 1 else None


def _token_text(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string or ``{"content": ...}``."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


class HfTokenizer(Tokenizer):
    """A Hugging Face tokenizer folder (``tokenizer.json``, ``tokenizer_config.json``).

    * ids: ``tokenizers.Tokenizer.from_file(tokenizer.json)``, ``add_special_tokens=False``,
      without the padding and truncation a tokenizer.json may set (as transformers reads it);
      ``special=False`` encodes special-token texts as ordinary text (the library's
      ``encode_special_tokens``), as llama.cpp does;
    * chat template: ``chat_template.jinja`` when the folder has one (transformers then reads
      it), else ``chat_template`` of tokenizer_config.json (a string, or a list of named
      templates: the one named ``default``);
    * ``bos_token``, ``eos_token``: tokenizer_config.json's (a text or an added-token object);
    * the BOS added before a text: tokenizer_config.json's ``add_bos_token`` when it sets one
      (the id of its ``bos_token``), else what the tokenizer's post-processor puts before a
      text when special tokens are added (Llama 3: ``<|begin_of_text|>``; BERT: ``[CLS]``;
      none for ChatML models such as SmolLM2 and Qwen2.5);
    * trained context: config.json's ``max_position_embeddings`` (or its ``text_config``'s),
      else tokenizer_config.json's ``model_max_length`` when it is a length (transformers
      writes 1e30 for none).
    """

    def __init__(self, folder: str | Path) -> None:
        from tokenizers import Tokenizer as RustTokenizer

        self.folder = Path(folder)
        self.source = str(self.folder)
        path = self.folder / "tokenizer.json"
        try:
            self._tok = RustTokenizer.from_file(str(path))
        except Exception as err:  # the library raises plain Exceptions for unreadable files
            raise StoryflowError(
                f"{path} is not a tokenizer.json the tokenizers library can read ({err}): "
                "download it again, or give the model's GGUF"
            ) from err
        self._tok.no_padding()  # a tokenizer.json may pad or cut every text (MiniLM's: 128)
        self._tok.no_truncation()
        self._lock = threading.Lock()  # encode_special_tokens is toggled per call
        self.config = _read_json(self.folder / "tokenizer_config.json")
        self._model_config = _read_json(self.folder / "config.json")
        self._anchor: list[int] | None = None

    def encode(self, text: str, *, special: bool = False) -> list[int]:
        with self._lock:
            self._tok.encode_special_tokens = not special
            try:
                return list(self._tok.encode(text, add_special_tokens=False).ids)
            finally:
                self._tok.encode_special_tokens = False

    def decode(self, ids: Sequence[int], *, special: bool = False) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=not special)

    def piece(self, token: int) -> str:
        """Decoded after an anchor token and cut after the anchor's text, so that a leading
        space survives decoders that drop the first token's (sentencepiece's ``▁``)."""
        if self._anchor is None:
            self._anchor = self.encode("a")[:1]
        lead = self.decode(self._anchor)
        both = self.decode([*self._anchor, token])
        return both[len(lead) :] if lead and both.startswith(lead) else self.decode([token])

    @property
    def chat_template(self) -> str | None:
        jinja = self.folder / "chat_template.jinja"
        if jinja.is_file():
            return jinja.read_text(encoding="utf-8")
        template = self.config.get("chat_template")
        if isinstance(template, list):  # named templates: the default one
            named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
            template = named.get("default")
        return template if isinstance(template, str) and template else None

    @property
    def template_source(self) -> str:
        return f"chat_template.jinja or tokenizer_config.json's chat_template in {self.folder}"

    def specials(self) -> dict[str, str]:
        return {
            "bos_token": _token_text(self.config.get("bos_token")) or "",
            "eos_token": _token_text(self.config.get("eos_token")) or "",
        }

    @property
    def bos_added(self) -> int | None:
        flag = self.config.get("add_bos_token")
        if isinstance(flag, bool):
            bos = _token_text(self.config.get("bos_token"))
            return self._tok.token_to_id(bos) if flag and bos else None
        bare = self._tok.encode("a", add_special_tokens=False).ids
        full = self._tok.encode("a", add_special_tokens=True).ids
        start = next(
            (i for i in range(len(full)) if full[i : i + len(bare)] == bare), None
        )  # where the text's own ids begin among those with special tokens added
        return int(full[0]) if start == 1 else None

    @property
    def context_length(self) -> int | None:
        model = self._model_config
        for config in (model, model.get("text_config") or {}):
            value = config.get("max_position_embeddings")
            if isinstance(value, int) and value > 0:
                return value
        value = self.config.get("model_max_length")
        if isinstance(value, int | float) and 0 < value < _NO_LENGTH:
            return int(value)
        return None


class TokenizerVocab:
    """A :class:`Tokenizer` as the NLL engine's planner reads a model's vocabulary (the
    interface of :class:`~storyflow.lm.backends.llama_cpp.VocabOnly` for a GGUF): a Hugging Face
    checkpoint's tokens, start token and training context, without its weights.

    ``start_token``: the BOS the tokenizer adds before a text; for a model trained without one
    (SmolLM2, Qwen2.5) its ``<|endoftext|>`` when that is one token, else its EOS, as
    :func:`~storyflow.lm.backends.llama_cpp.start_token_of` chooses for a GGUF.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        from storyflow.lm.backends.llama_cpp import UNKNOWN_TRAINING_CONTEXT

        self.llm = tokenizer  # what storyflow.lm.prompts.ChatPrompt reads the template from
        self.n_ctx_train = tokenizer.context_length or UNKNOWN_TRAINING_CONTEXT

    def tokenize(self, text: str) -> list[int]:
        return self.llm.encode(text)

    def text(self, ids: Sequence[int]) -> str:
        """The text of ``ids``, special tokens written out (a served model's text prompt)."""
        return self.llm.decode(ids, special=True)

    @property
    def start_token(self) -> int:
        from storyflow.lm.backends.llama_cpp import END_OF_TEXT

        if self.llm.bos_added is not None:
            return self.llm.bos_added
        for text in (END_OF_TEXT, self.llm.specials()["eos_token"]):
            ids = self.llm.encode(text, special=True) if text else []
            if len(ids) == 1:
                return ids[0]
        raise StoryflowError(
            f"{self.llm.source}: the tokenizer has no BOS, no {END_OF_TEXT} and no EOS token "
            "to start a sequence with"
        )


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object file, {} when absent."""
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise StoryflowError(f"{path} is not valid JSON ({err}): download it again") from err
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class TokenizerSource:
    """What a served model's ``tokenizer`` value names: ``kind`` (one of :data:`KINDS`),
    ``location`` (the GGUF file, the folder, or the hub id) and a hub ``revision`` (None:
    the default branch)."""

    kind: str
    location: str
    revision: str | None = None


def tokenizer_source(value: str, where: str) -> TokenizerSource:
    """Which of the three forms ``value`` is, checked on this machine (no download).

    * a path ending in ``.gguf``, or any other existing file except a ``tokenizer.json``: a GGUF;
    * an existing folder, or a ``tokenizer.json`` file (its folder): a Hugging Face folder, which
      must hold ``tokenizer.json``;
    * else ``org/name`` or ``org/name@revision``: a Hugging Face hub id.

    Paths may start with ``~``; relative ones are taken from the directory the workflow runs in.
    ``where`` names the model and key in messages.

    Raises:
        StoryflowError: a GGUF path that is not a file, a folder without tokenizer.json, or a
            value that is none of the three.
    """
    path = Path(value).expanduser()
    if path.is_dir():
        if not (path / "tokenizer.json").is_file():
            raise StoryflowError(
                f"{where}: the folder {path} has no tokenizer.json: give a Hugging Face tokenizer "
                "folder (tokenizer.json and tokenizer_config.json, as on the model's hub page), "
                "the model's GGUF file, or a hub id org/name"
            )
        return TokenizerSource("folder", str(path))
    if path.is_file():
        if path.name == "tokenizer.json":
            return TokenizerSource("folder", str(path.parent))
        return TokenizerSource("gguf", str(path))
    if value.lower().endswith(".gguf"):
        raise StoryflowError(
            f"{where}: {path} is not a file: give the served model's GGUF on this machine (only "
            "its vocabulary and chat template are read), a Hugging Face tokenizer folder, a hub "
            "id org/name, or tokenizer: null (word counts, the chat API)"
        )
    match = HUB_ID.match(value)
    if match is None:
        raise StoryflowError(
            f"{where}: {value!r} is neither a file nor a folder on this machine ({path.absolute()} "
            "does not exist) nor a Hugging Face hub id (org/name): give the model's GGUF, a "
            "folder holding its tokenizer.json and tokenizer_config.json, or its hub id"
        )
    return TokenizerSource("hub", match.group(1), match.group(2))


def hub_folder(
    repo: str, revision: str | None, where: str, files: Sequence[str] = HUB_FILES
) -> Path:
    """The local folder (a snapshot named by its commit) of hub model ``repo``'s ``files``
    (glob patterns, the first required: by default its tokenizer, :data:`HUB_FILES`), from the
    Hugging Face cache (``HF_HOME``, ``HF_HUB_CACHE``), else downloaded into it with
    ``huggingface_hub.snapshot_download`` (a gated model needs ``HF_TOKEN``).

    Raises:
        StoryflowError: not cached and not downloadable (offline, gated, unknown), saying what
            to download and where to put it.
    """
    folder = _cached_snapshot(repo, revision, files)
    if folder is not None:
        return folder
    what = "tokenizer" if files == HUB_FILES else "checkpoint"
    folder = _download_snapshot(repo, revision, files, what, where)
    named = f"{repo}@{revision}" if revision else repo
    if what == "checkpoint" and not _has_first(folder, files):
        raise StoryflowError(
            f"{where}: the Hugging Face model {named} has no {files[0]} files: storyflow reads "
            "safetensors checkpoints (convert it once with transformers: "
            "AutoModelForCausalLM.from_pretrained(...).save_pretrained(<folder>))"
        )
    if not _has_first(folder, files):
        raise StoryflowError(
            f"{where}: the Hugging Face model {named} has no tokenizer.json (a slow-only "
            "tokenizer): convert it once with transformers (AutoTokenizer.from_pretrained(...)"
            ".save_pretrained(<folder>)) and set the tokenizer to that folder"
        )
    return folder


def _snapshot(repo: str, revision: str | None, files: Sequence[str], local_only: bool) -> Path:
    """``huggingface_hub.snapshot_download`` of ``repo``'s ``files`` (glob patterns), from the
    cache only when ``local_only``."""
    from huggingface_hub import snapshot_download

    folder = snapshot_download(
        repo, revision=revision, allow_patterns=list(files), local_files_only=local_only
    )
    return Path(folder)


def _has_first(folder: Path, files: Sequence[str]) -> bool:
    """Whether ``folder`` holds a file of the first (required) pattern of ``files``."""
    return any(folder.glob(files[0]))


def _cached_snapshot(repo: str, revision: str | None, files: Sequence[str]) -> Path | None:
    """The cached snapshot of ``repo``'s ``files`` when it holds the required ones, else None."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        folder = _snapshot(repo, revision, files, local_only=True)
        if _has_first(folder, files):
            return folder
    except (LocalEntryNotFoundError, OSError):
        pass
    return None


def _download_snapshot(
    repo: str, revision: str | None, files: Sequence[str], what: str, where: str
) -> Path:
    """``repo``'s ``files`` downloaded into the Hugging Face cache; a failure (gated, unknown
    repo or revision, offline) is a :class:`StoryflowError` that says what to do, naming the
    ``what`` (tokenizer or checkpoint) and ``where`` it is configured."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    named = f"{repo}@{revision}" if revision else repo
    listed = "tokenizer.json tokenizer_config.json" if what == "tokenizer" else ""
    get = (
        f"on a machine with internet access run `hf download {repo} {listed}"
        f"{f' --revision {revision}' if revision else ''} --local-dir <folder>`, copy <folder> "
        f"here and set the {what} to it (or fill this machine's Hugging Face cache, HF_HOME, "
        "the same way without --local-dir)"
    ).replace("  ", " ")
    try:
        return _snapshot(repo, revision, files, local_only=False)
    except GatedRepoError as err:
        raise StoryflowError(
            f"{where}: the Hugging Face model {named} is gated: accept its licence on its hub "
            f"page and export HF_TOKEN (a read token), or {get}"
        ) from err
    except RepositoryNotFoundError as err:
        raise StoryflowError(
            f"{where}: {named!r} is not a Hugging Face model (nor a file or folder here): check "
            "the id (org/name), or export HF_TOKEN for a private one"
        ) from err
    except RevisionNotFoundError as err:
        raise StoryflowError(f"{where}: {named} has no revision {revision!r}") from err
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as err:
        raise StoryflowError(
            f"{where}: the {what} of the Hugging Face model {named} is not in this machine's "
            f"cache and cannot be downloaded ({type(err).__name__}): {get}"
        ) from err


def open_tokenizer(value: str, where: str) -> Tokenizer:
    """The tokenizer ``value`` names (:func:`tokenizer_source`): a GGUF, a Hugging Face
    folder, or a hub id (fetched by :func:`hub_folder`). ``where`` names the model and key."""
    source = tokenizer_source(value, where)
    if source.kind == "gguf":
        try:
            return GgufTokenizer.load(source.location)
        except ValueError as err:  # llama.cpp could not read it
            raise StoryflowError(
                f"{where}: {source.location} is not a GGUF llama.cpp can read ({err}): give the "
                "model's GGUF, a Hugging Face tokenizer folder or a hub id org/name"
            ) from err
    folder = source.location
    if source.kind == "hub":
        folder = str(hub_folder(source.location, source.revision, where))
    try:
        return HfTokenizer(folder)
    except StoryflowError as err:  # an unreadable file: name the model and key too
        raise StoryflowError(f"{where}: {err}") from err


def as_tokenizer(llm: Any) -> Tokenizer:
    """``llm`` as a :class:`Tokenizer`: itself, or a llama-cpp-python ``Llama`` wrapped."""
    return llm if isinstance(llm, Tokenizer) else GgufTokenizer(llm)
