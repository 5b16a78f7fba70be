"""Chat-template prompts for instruction-tuned models.

An instruct model is scored inside its own chat template (GGUF ``tokenizer.chat_template``),
rendered with jinja2 as the model's tokenizer would:

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
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from storyflow.errors import StoryflowError

_MARK = "\x1fSTORYFLOW-STORY\x1f"


def render_chat(template: str, messages: list[dict[str, str]], **special: str) -> str:
    """Render a Hugging Face style chat template (jinja2, sandboxed, as transformers does)."""
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(template).render(
        messages=messages, add_generation_prompt=False, **special
    )


class ChatPrompt:
    """Builds the token prefix of each formulation from a GGUF model's chat template.

    ``llm`` is a llama-cpp-python ``Llama`` (``vocab_only`` is enough).
    """

    def __init__(self, llm: Any, model_name: str = "model") -> None:
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise StoryflowError(
                f"model {model_name} has no chat template (GGUF tokenizer.chat_template): "
                "set `prompt: plain` for it in the config"
            )
        self.llm = llm
        self.template = template
        self.special = {
            "bos_token": self._text(llm.token_bos()),
            "eos_token": self._text(llm.token_eos()),
        }
        adds_bos = str(llm.metadata.get("tokenizer.ggml.add_bos_token", "true")).lower() == "true"
        self.bos = int(llm.token_bos()) if adds_bos and llm.token_bos() >= 0 else None

    def _text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

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
        rendered = render_chat(self.template, self.messages(formulation, topic), **self.special)
        if rendered.count(_MARK) != 1:
            raise StoryflowError("the chat template does not place the assistant content once")
        return rendered[: rendered.index(_MARK)]

    def prefix(self, formulation: str, topic: str | None) -> list[int]:
        """Token ids of the prefix (special tokens parsed; BOS first when the model adds one)."""
        text = self.prefix_text(formulation, topic)
        ids = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if self.bos is not None and (not ids or ids[0] != self.bos):
            ids = [self.bos, *ids]
        return ids
