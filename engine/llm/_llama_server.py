"""Entry point for the embedded server: llama_cpp.server with llama.cpp's extra CPU buffer types off.

llama.cpp's AMX weight repacking segfaults on batched prompt evaluation on this project's Xeon
machines (measured: any n_batch > 1 crashes in decode), so weights stay in plain CPU buffers.
Run as `python -m engine.llm._llama_server <llama_cpp.server arguments>`.
"""
from __future__ import annotations


def _plain_cpu_buffers() -> None:
    import llama_cpp
    import llama_cpp.llama as llama_module

    original = llama_cpp.llama_model_default_params

    def default_params():  # type: ignore[no-untyped-def]
        params = original()
        params.use_extra_bufts = False
        return params

    llama_module.llama_cpp.llama_model_default_params = default_params  # type: ignore[attr-defined]


def main() -> None:
    """Patch, then hand over to llama_cpp.server's own command line."""
    _plain_cpu_buffers()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
