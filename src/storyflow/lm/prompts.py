"""Chat-template prompts for instruction-tuned models.

An instruct model is scored inside its own chat template (GGUF ``tokenizer.chat_template``, or a
Hugging Face folder's ``chat_template``: :mod:`storyflow.lm.tokenizer`), rendered with jinja2 as
the model's tokenizer would:

* topic formulation: messages = [user: *topic*, assistant: *story*];
* context formulation: messages = [assistant: *story*] (no user turn: nothing but the template's
  own scaffolding, e.g. a default system prompt, precedes the story);

where *story* = the history sentences followed by the target sentence. The rendered text is cut
at the start of the assistant's content: everything before it is the **prefix** (tokenized with
special tokens parsed; the model's BOS is prepended when its tokenizer adds one and the template
does not write it). The story part is *not* rendered as text: it is the concatenation of the
once-tokenized sentences (each with its leading space, exactly as in the plain format), so the
scored tokens are exactly the target sentence's tokens and identical in every condition. The end
of the assistant turn (e.g. ``<|im_end|>``) comes after the target and is never scored.

Prompts for sampling and closed-choice answers (:func:`generation_prompt`) end where the
assistant's reply begins: either the chat template rendered with ``add_generation_prompt``, or,
for base models, a plain frame (the messages' texts, then a cue line chosen by the caller).
:func:`prompt_tokens` turns such a text into token ids the way a llama.cpp server does.

Every function that takes ``llm`` accepts a :class:`~storyflow.lm.tokenizer.Tokenizer` (a GGUF's or
a Hugging Face folder's) or a llama-cpp-python ``Llama`` (``vocab_only`` is enough), which is
read as its GGUF tokenizer: the template, its special tokens and the BOS rule come from the
tokenizer, and the rendering is the same for both kinds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from storyflow.errors import StoryflowError
from storyflow.lm.tokenizer import as_tokenizer

_MARK = "\x1fSTORYFLOW-STORY\x1f"


def render_chat(
    template: str,
    messages: list[dict[str, str]],
    add_generation_prompt: bool = False,
    **special: str,
) -> str:
    """Render a Hugging Face style chat template (jinja2, sandboxed, as transformers does).

    ``add_generation_prompt``: end with the header of an assistant turn (for generation).
    """
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(template).render(
        messages=messages, add_generation_prompt=add_generation_prompt, **special
    )


def chat_template(llm: Any, model_name: str = "model") -> str:
    """The model's chat template (GGUF ``tokenizer.chat_template``, or a Hugging Face folder's
    ``chat_template``); a clear error when it has none."""
    tokenizer = as_tokenizer(llm)
    template = tokenizer.chat_template
    if not template:
        raise StoryflowError(
            f"model {model_name} has no chat template ({tokenizer.template_source}): "
            "set `prompt: plain` for it in the config"
        )
    return template


def template_specials(llm: Any) -> dict[str, str]:
    """The special-token texts chat templates use: ``bos_token`` and ``eos_token``."""
    return as_tokenizer(llm).specials()


def added_bos(llm: Any) -> int | None:
    """The BOS id the model's tokenizer puts before a text, or None when it adds none (GGUF
    ``tokenizer.ggml.add_bos_token``; a Hugging Face tokenizer's ``add_bos_token`` or
    post-processor)."""
    return as_tokenizer(llm).bos_added


def prompt_tokens(llm: Any, text: str) -> list[int]:
    """Token ids of a rendered prompt, as a llama.cpp server tokenizes a completion prompt.

    Special tokens written in the text (``<|im_start|>``) are parsed; the model's BOS comes first
    when its tokenizer adds one (:func:`added_bos`) and the text does not already begin with it
    (a chat template may write it).
    """
    tokenizer = as_tokenizer(llm)
    ids = tokenizer.encode(text, special=True)
    bos = tokenizer.bos_added
    if bos is not None and (not ids or ids[0] != bos):
        ids = [bos, *ids]
    return ids


GENERATION_MODES = ("chat", "plain")
ASKING_ROLES = ("system", "user")


@dataclass(frozen=True)
class Messages:
    """A prompt left to a server's own chat template (the OpenAI chat API, ``api: chat``).

    ``messages``: ``(role, content)`` pairs, roles in :data:`ASKING_ROLES`. A served model whose
    chat template storyflow cannot read gets its prompts in this form; every other model gets
    the rendered text (:func:`generation_prompt`). Samplers and answerers accept either.
    """

    messages: tuple[tuple[str, str], ...]

    def as_dicts(self) -> list[dict[str, str]]:
        """The messages as the chat API takes them."""
        return [{"role": role, "content": content} for role, content in self.messages]

    @property
    def text(self) -> str:
        """The messages' contents joined by a blank line (for counting words, for logs)."""
        return "\n\n".join(content for _, content in self.messages)


Prompt = str | Messages
"""A prompt as a sampler or answerer takes it: rendered text, or messages for a chat API."""


def check_messages(messages: Sequence[Mapping[str, str]]) -> None:
    """Stop unless every message has a role in :data:`ASKING_ROLES` and a text content."""
    for message in messages:
        if message.get("role") not in ASKING_ROLES or not isinstance(message.get("content"), str):
            raise StoryflowError(
                f"prompt messages need a role in {ASKING_ROLES} and a text content, "
                f"not {dict(message)!r}"
            )


def generation_prompt(
    llm: Any,
    messages: Sequence[Mapping[str, str]],
    *,
    mode: str = "chat",
    cue: str = "",
    model_name: str = "model",
) -> str:
    """Prompt text ending where the model's answer begins.

    ``messages``: ``[{"role": "system" | "user", "content": text}, ...]``. ``mode``:

    * ``chat``: the model's chat template (``llm``'s: a
      :class:`~storyflow.lm.tokenizer.Tokenizer` or a llama-cpp-python ``Llama``) rendered with
      ``add_generation_prompt``: the text ends with the header of the assistant's turn
      (SmolLM2: ``<|im_start|>assistant\n``). ``cue`` must be empty (the template decides how
      the turn begins);
    * ``plain``, for base models: the messages' contents (stripped) joined by a blank line, then,
      when ``cue`` is given, a line break and ``cue`` (e.g. ``"Answer:"``; the answer or sample
      then continues that line, so answer options usually start with a space).

    Turn the text into token ids with :func:`prompt_tokens`.
    """
    check_messages(messages)
    if mode == "chat":
        if cue:
            raise StoryflowError("a cue is for plain prompts; a chat template sets the turn")
        listed = [{"role": m["role"], "content": m["content"]} for m in messages]
        tokenizer = as_tokenizer(llm)
        return render_chat(
            chat_template(tokenizer, model_name), listed, add_generation_prompt=True,
            **template_specials(tokenizer),
        )  # fmt: skip
    if mode == "plain":
        text = "\n\n".join(m["content"].strip() for m in messages)
        return f"{text}\n{cue}" if cue else text
    raise StoryflowError(f"prompt mode must be one of {GENERATION_MODES}, not {mode!r}")


class ChatPrompt:
    """Builds the token prefix of each formulation from a model's chat template.

    ``llm`` is a llama-cpp-python ``Llama`` (``vocab_only`` is enough) or a
    :class:`~storyflow.lm.tokenizer.Tokenizer`.
    """

    def __init__(self, llm: Any, model_name: str = "model") -> None:
        self.llm = llm
        tokenizer = as_tokenizer(llm)
        self.template = chat_template(tokenizer, model_name)
        self.special = template_specials(tokenizer)
        self.bos = added_bos(tokenizer)

    def messages(self, formulation: str, topic: str | None) -> list[dict[str, str]]:
        if formulation == "topic":
            if topic is None:
                raise ValueError("the topic formulation needs a topic")
            return [
                {"role": "user", "content": topic.strip()},
                {"role": "assistant", "content": _MARK},
            ]
        return [{"role": "assistant", "content": _MARK}]

    def prefix_text(self, formulation: str, topic: str | None) -> str:
        """The rendered template up to the start of the assistant's content."""
        rendered = render_chat(
            self.template,
            self.messages(formulation, topic),
            add_generation_prompt=False,
            **self.special,
        )
        if rendered.count(_MARK) != 1:
            raise StoryflowError("the chat template does not place the assistant content once")
        return rendered[: rendered.index(_MARK)]

    def prefix(self, formulation: str, topic: str | None) -> list[int]:
        """Token ids of the prefix (special tokens parsed; BOS first when the model adds one)."""
        return prompt_tokens(self.llm, self.prefix_text(formulation, topic))
