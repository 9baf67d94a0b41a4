"""Chat messages to one prompt: the GGUF's own Jinja template, or a named format (gemma3).

Rendered as llama-cpp-python's Jinja2ChatFormatter renders it (sandboxed, trim_blocks and
lstrip_blocks, the model's BOS and EOS texts, EOS as the stop), so both runtimes see one prompt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class _Runtime(Protocol):
    @property
    def bos_token(self) -> str: ...

    @property
    def eos_token(self) -> str: ...

    def metadata(self, key: str) -> str | None: ...


@dataclass(frozen=True)
class RenderedPrompt:
    """The prompt text, the stops its format implies, and whether the tokenizer adds BOS."""

    prompt: str
    stop: list[str] = field(default_factory=list)
    add_bos: bool = False


def gemma3_prompt(messages: list[dict[str, Any]]) -> str:
    """Gemma 3's chat template: the system text opens the first user turn; tool results are user turns."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    turns: list[str] = []
    for message in (m for m in messages if m.get("role") != "system"):
        role = "model" if message.get("role") == "assistant" else "user"
        content = message.get("content") if isinstance(message.get("content"), str) else ""
        if system and role == "user":
            content, system = f"{system}\n\n{content}", ""
        turns.append(f"<start_of_turn>{role}\n{content}<end_of_turn>\n")
    return "".join(turns) + "<start_of_turn>model\n"


def _raise(message: str) -> None:
    raise ValueError(message)


class ChatPrompter:
    """Renders messages with one template (Jinja text) or the named format "gemma3"."""

    def __init__(self, template: str | None, *, bos_token: str = "", eos_token: str = "",
                 chat_format: str | None = None):
        if chat_format not in (None, "gemma3"):
            raise ValueError(f"unknown chat format {chat_format!r}: the embedded runtime knows gemma3")
        if chat_format is None and not template:
            raise ValueError("the GGUF carries no chat template; name a chat format")
        self.chat_format, self.bos_token, self.eos_token = chat_format, bos_token, eos_token
        self._template = None
        if chat_format is None:
            from jinja2 import BaseLoader
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            env = ImmutableSandboxedEnvironment(loader=BaseLoader(), trim_blocks=True, lstrip_blocks=True)
            self._template = env.from_string(template or "")

    @classmethod
    def for_runtime(cls, runtime: _Runtime, chat_format: str | None = None) -> ChatPrompter:
        """The prompter for a loaded model: its GGUF template unless a format is named."""
        template = None if chat_format else runtime.metadata("tokenizer.chat_template")
        return cls(template, bos_token=runtime.bos_token, eos_token=runtime.eos_token, chat_format=chat_format)

    def render(self, messages: list[dict[str, Any]]) -> RenderedPrompt:
        """One prompt ending where the assistant's reply begins."""
        messages = [{**m, "content": m.get("content") if isinstance(m.get("content"), str) else ""}
                    for m in messages]
        if self.chat_format == "gemma3":
            # Registered in llama-cpp-python with no added_special, so its tokenizer adds BOS.
            return RenderedPrompt(gemma3_prompt(messages), ["<end_of_turn>"], add_bos=True)
        assert self._template is not None
        prompt = self._template.render(messages=messages, bos_token=self.bos_token, eos_token=self.eos_token,
                                       add_generation_prompt=True, raise_exception=_raise)
        return RenderedPrompt(prompt, [self.eos_token] if self.eos_token else [])
