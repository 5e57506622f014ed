"""What a local OpenAI-compatible server can do, asked once: its context size, its parallel slots, and
how to count tokens in its model's own tokenizer.

Each server says it its own way (asked in this order, the first that answers wins):

- llama.cpp's server: ``GET /props`` → ``default_generation_settings.n_ctx`` (the context of one slot)
  and ``total_slots``; ``POST /tokenize`` counts tokens exactly.
- LM Studio: ``GET /api/v0/models`` → the model's ``loaded_context_length`` (else ``max_context_length``).
- Ollama: ``GET /api/ps`` → the loaded model's ``context_length``; else ``POST /api/show`` → a
  ``num_ctx`` in its parameters (a Modelfile's), else Ollama's default of 4,096 tokens, never more than
  the model's ``*.context_length``; ``OLLAMA_NUM_PARALLEL`` is not visible, so one at a time.
- vLLM: ``GET /v1/models`` → the model's ``max_model_len``.

A server that says nothing (llama-cpp-python's, a hosted API) gets the ``context_tokens`` setting, or
no context at all (then parts are sized by ``max_digest_chars`` alone, as for Claude). Without a
tokenizer endpoint tokens are estimated, on the safe side (:func:`estimate_tokens`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

OLLAMA_DEFAULT_CONTEXT = 4096
"""What Ollama gives a model when nothing sets ``num_ctx`` (``OLLAMA_CONTEXT_LENGTH`` for the service,
a Modelfile's ``PARAMETER num_ctx``) on a machine with under 24 GiB of VRAM."""
CHARS_PER_TOKEN = 3.0
"""The estimate's characters per token for Latin-script text, on the safe side: measured 3.45–3.94 (3.74
overall) on four real sessions' digests with SmolLM2's tokenizer (``tests/bench/bench_local_model.py
--tokens-only``), so the estimate counts about 1.25× the real tokens."""
PROBE_TIMEOUT = 10.0
"""Seconds each of the probe's requests may take (they answer at once on a live server)."""

_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
_PAST_BMP = re.compile(r"[\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the probe learnt; every field may be unknown (None)."""

    kind: str = "unknown"
    """``llama.cpp``, ``lm-studio``, ``ollama``, ``vllm`` or ``unknown``."""
    context: int | None = None
    """Tokens one request may use (prompt and answer together)."""
    context_source: str = ""
    """Where ``context`` came from, for the person (``llama.cpp /props n_ctx``, ``context_tokens``…)."""
    slots: int | None = None
    """Requests the server works on at once (llama.cpp's ``total_slots``); None: not said."""
    tokenizer: bool = False
    """``POST /tokenize`` counts tokens with the model's own tokenizer (llama.cpp)."""

    def describe(self) -> str:
        """One line: which server, its context and its slots."""
        ctx = (
            f"context {self.context:,} tokens ({self.context_source})" if self.context else "context unknown"
        )
        slots = f", {self.slots} slot(s)" if self.slots else ""
        return f"{self.kind} server, {ctx}{slots}"


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, estimated on the safe side where no tokenizer is at hand: a wide (CJK) or
    astral character counts one token, the rest :data:`CHARS_PER_TOKEN` characters per token."""
    wide = len(_WIDE.findall(text)) + len(_PAST_BMP.findall(text))
    return wide + math.ceil((len(text) - wide) / CHARS_PER_TOKEN)


def server_root(base_url: str) -> str:
    """The server's root: the base URL without its ``/v1`` (llama.cpp's and Ollama's own endpoints live there)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _same_model(entry: dict[str, Any], model: str | None) -> bool:
    if not model:
        return True
    names = {str(entry.get(k)) for k in ("id", "name", "model") if entry.get(k)}
    return model in names or any(n.split(":")[0] == model for n in names)


def from_llama_props(props: Any) -> ServerInfo | None:
    """llama.cpp's ``GET /props``: the context of one slot and how many slots."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    ctx = _int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    ctx = ctx or _int(props.get("n_ctx"))
    if ctx is None and "total_slots" not in props:
        return None
    return ServerInfo("llama.cpp", ctx, "llama.cpp /props n_ctx", _int(props.get("total_slots")), True)


def from_lm_studio(models: Any, model: str | None) -> ServerInfo | None:
    """LM Studio's ``GET /api/v0/models``: the loaded context of the model, else its maximum."""
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return None
    for entry in data:
        if not isinstance(entry, dict) or not _same_model(entry, model):
            continue
        loaded, most = _int(entry.get("loaded_context_length")), _int(entry.get("max_context_length"))
        if loaded or most:
            source = "LM Studio loaded_context_length" if loaded else "LM Studio max_context_length"
            return ServerInfo("lm-studio", loaded or most, source, None, False)
    return None


def from_ollama(ps: Any, show: Any, model: str | None) -> ServerInfo | None:
    """Ollama: the running model's ``context_length`` (``/api/ps``), else the Modelfile's ``num_ctx``
    (``/api/show``), else Ollama's default; never above the model's trained context."""
    trained = None
    num_ctx = None
    if isinstance(show, dict):
        info = show.get("model_info")
        if isinstance(info, dict):
            trained = next((_int(v) for k, v in info.items() if k.endswith(".context_length")), None)
        params = show.get("parameters")
        if isinstance(params, str):
            found = re.search(r"(?m)^\s*num_ctx\s+(\d+)", params)
            num_ctx = int(found.group(1)) if found else None
    running = None
    if isinstance(ps, dict) and isinstance(ps.get("models"), list):
        for entry in ps["models"]:
            if isinstance(entry, dict) and _same_model(entry, model):
                running = _int(entry.get("context_length"))
                if running:
                    break
    if running is None and num_ctx is None and trained is None:
        return None
    if running:
        ctx, source = running, "Ollama /api/ps context_length"
    elif num_ctx:
        ctx, source = num_ctx, "Ollama num_ctx"
    else:
        ctx, source = OLLAMA_DEFAULT_CONTEXT, "Ollama's default (no num_ctx set)"
    if trained and ctx > trained:
        ctx, source = trained, "the model's trained context_length"
    return ServerInfo("ollama", ctx, source, None, False)


def from_models_list(models: Any, model: str | None) -> ServerInfo | None:
    """``GET /v1/models``: vLLM's ``max_model_len``, or llama.cpp's ``meta.n_ctx_train`` is not the
    served context (ignored)."""
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return None
    for entry in data:
        if isinstance(entry, dict) and _same_model(entry, model):
            ctx = _int(entry.get("max_model_len"))
            if ctx:
                return ServerInfo("vllm", ctx, "vLLM max_model_len", None, False)
    return None


def with_setting(info: ServerInfo, context_tokens: int | None) -> ServerInfo:
    """The ``context_tokens`` setting: the context when the server says none, a cap when it says more."""
    if context_tokens is None:
        return info
    if info.context is None or context_tokens < info.context:
        return ServerInfo(info.kind, context_tokens, "context_tokens setting", info.slots, info.tokenizer)
    return info
