"""A stand-in for the Claude Code CLI, speaking the protocol ``claude_agent_sdk`` speaks to it.

The SDK (``_internal/transport/subprocess_cli.py``) starts ``cli_path --output-format stream-json
--verbose ... --input-format stream-json`` and writes NDJSON on stdin: a ``control_request``
``initialize`` (answered with a ``control_response``), then one ``user`` message, then closes stdin.
The CLI answers on stdout with ``system``/``init``, the ``assistant`` message(s) and one ``result``
(usage, ``total_cost_usd``, ``structured_output``); an error result is followed by exit code 1.

Run with ``FAKE_CLAUDE_DIR`` set to a folder holding ``script.json`` (a list of answers, one per
call, taken in order; the last one repeats). Each call appends what it saw to ``calls.jsonl``:
argv, cwd, a few environment variables and every stdin message. Like the real CLI it refuses a
command line it would not run as dreamtui means it (the stand-in's own check of the flags the SDK
passed): an unknown flag, or one of no tools, one turn, no session persistence, no setting sources,
strict MCP config, a system prompt, a JSON schema missing.

An answer is an object with ``kind``:

- ``ok``: ``structured`` (the object returned), optional ``usage``, ``cost``, ``model``;
- ``text``: no ``structured_output``, the answer as ``text`` in ``result`` (an older CLI);
- ``not_logged_in``, ``usage_limit``, ``bad_model``: the error messages the real CLI sends;
- ``crash``: writes ``stderr`` and exits 3 before answering;
- ``hang``: never answers (a stuck CLI or network).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

VERSION = "2.1.332"
KNOWN_FLAGS = {
    "--output-format": 1,
    "--verbose": 0,
    "--system-prompt": 1,
    "--tools": 1,
    "--max-turns": 1,
    "--model": 1,
    "--json-schema": 1,
    "--input-format": 1,
    "--no-session-persistence": 0,
    "--strict-mcp-config": 0,
    "--setting-sources": 1,
}


def parse_argv(argv: list[str]) -> tuple[dict[str, str | None], list[str]]:
    """Flags as the CLI reads them (``--flag value``, ``--flag=value``, boolean ``--flag``), and problems."""
    flags: dict[str, str | None] = {}
    problems: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name not in KNOWN_FLAGS:
            problems.append(f"unknown option {arg!r}")
            i += 1
            continue
        if KNOWN_FLAGS[name] and not eq:
            if i + 1 >= len(argv):
                problems.append(f"option {name} needs a value")
                break
            value = argv[i + 1]
            i += 1
        flags[name] = value if (eq or KNOWN_FLAGS[name]) else None
        i += 1
    return flags, problems


def check_flags(flags: dict[str, str | None]) -> list[str]:
    """What dreamtui's calls must always carry: no tools, one turn, no transcript, no settings."""
    problems = []
    expect = {
        "--tools": "",
        "--max-turns": "1",
        "--setting-sources": "",
        "--output-format": "stream-json",
        "--input-format": "stream-json",
    }
    for flag, value in expect.items():
        if flags.get(flag, "<absent>") != value:
            problems.append(f"{flag} is {flags.get(flag, '<absent>')!r}, not {value!r}")
    for flag in ("--no-session-persistence", "--strict-mcp-config"):
        if flag not in flags:
            problems.append(f"{flag} is missing")
    if not flags.get("--system-prompt"):
        problems.append("--system-prompt is missing")
    try:
        schema = json.loads(flags.get("--json-schema") or "")
    except ValueError:
        problems.append("--json-schema is missing or not JSON")
    else:
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append("--json-schema is not an object schema")
    return problems


def take_answer(world: Path) -> tuple[int, dict[str, Any]]:
    """The next scripted answer (the last repeats) and this call's number, under a file lock."""
    with open(world / "lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = world / "counter"
        n = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(n + 1))
    script = json.loads((world / "script.json").read_text())
    return n, script[min(n, len(script) - 1)]


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    world = Path(os.environ["FAKE_CLAUDE_DIR"])
    flags, problems = parse_argv(sys.argv[1:])
    problems += check_flags(flags)
    n, answer = take_answer(world)
    seen: list[dict[str, Any]] = []
    record = {
        "n": n,
        "pid": os.getpid(),
        "argv": sys.argv[1:],
        "flags": flags,
        "cwd": os.getcwd(),
        "env": {
            k: os.environ.get(k)
            for k in (
                "CLAUDE_CODE_ENTRYPOINT",
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                "CLAUDECODE",
            )
        },
        "stdin": seen,
        "problems": problems,
    }

    def log() -> None:
        with open(world / "calls.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    if problems:
        record["refused"] = True
        log()
        sys.stderr.write("error: " + "; ".join(problems) + "\n")
        return 2
    if answer["kind"] == "crash":
        log()
        sys.stderr.write(answer.get("stderr", "Segmentation fault") + "\n")
        sys.stderr.flush()
        return 3
    session = str(uuid.uuid4())
    model = flags.get("--model") or "claude-sonnet-5-5"
    prompt_seen = False
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        seen.append(msg)
        if msg.get("type") == "control_request":
            request = msg.get("request", {})
            response: dict[str, Any] = {}
            if request.get("subtype") == "initialize":
                response = {"commands": [], "output_style": "default", "models": [], "account": {}}
            send(
                {
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": msg["request_id"], "response": response},
                }
            )
        elif msg.get("type") == "user" and not prompt_seen:
            prompt_seen = True
            log()
            code = answer_prompt(answer, session, model)
            if code is not None:
                return code
    if not prompt_seen:
        log()
    return 0


def init(session: str, model: str) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "init",
        "cwd": os.getcwd(),
        "session_id": session,
        "tools": [],
        "mcp_servers": [],
        "model": model,
        "permissionMode": "default",
        "slash_commands": [],
        "apiKeySource": "none",
        "claude_code_version": VERSION,
        "output_style": "default",
        "agents": [],
        "skills": [],
        "plugins": [],
        "uuid": str(uuid.uuid4()),
    }


def result(session: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 1234,
        "duration_api_ms": 1100,
        "num_turns": 1,
        "result": "",
        "stop_reason": "end_turn",
        "session_id": session,
        "total_cost_usd": 0.0,
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "modelUsage": {},
        "permission_denials": [],
        "terminal_reason": "completed",
        "uuid": str(uuid.uuid4()),
    }
    base.update(fields)
    return base


def synthetic_error(session: str, kind: str, text: str, status: int | None) -> None:
    """What the CLI sends when the API call itself fails: a synthetic assistant message carrying the
    error kind and text, then an error result (subtype ``success``, ``is_error``) with the status.
    (The not-logged-in shape is what the bundled CLI 2.1.332 sent with an empty HOME.)"""
    send(
        {
            "type": "assistant",
            "message": {
                "id": str(uuid.uuid4()),
                "type": "message",
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "stop_sequence",
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
            "parent_tool_use_id": None,
            "session_id": session,
            "error": kind,
            "is_api_error_message": True,
            "uuid": str(uuid.uuid4()),
        }
    )
    send(
        result(
            session,
            is_error=True,
            result=text,
            api_error_status=status,
            duration_api_ms=0,
            stop_reason="stop_sequence",
            terminal_reason="api_error",
        )
    )


def answer_prompt(answer: dict[str, Any], session: str, model: str) -> int | None:
    """Send the scripted answer; the exit code when the process ends now (None: read stdin to EOF)."""
    kind = answer["kind"]
    send({"type": "system", "subtype": "session_state_changed", "state": "running", "sdk_host_only": True})
    send(init(session, model))
    if kind == "hang":
        threading.Event().wait()  # the SDK closes stdin at once; a stuck CLI never answers, until killed
    if kind == "not_logged_in":
        synthetic_error(session, "authentication_failed", "Not logged in · Please run /login", None)
        return 1
    if kind == "usage_limit":
        text = "You've hit your limit · resets 3am (UTC)"
        synthetic_error(session, "rate_limit", text, 429)
        return 1
    if kind == "bad_model":
        text = (
            f"There's an issue with the selected model ({model}). It may not exist or you may not have "
            "access to it. Run --model to pick a different model."
        )
        synthetic_error(session, "invalid_request", text, 404)
        return 1
    usage = {
        "input_tokens": 1200,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 2000,
        "output_tokens": 180,
        "server_tool_use": {"web_search_requests": 0},
        "service_tier": "standard",
        **answer.get("usage", {}),
    }
    tool_id = "toolu_" + uuid.uuid4().hex[:20]
    if kind == "ok":
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": tool_id, "name": "StructuredOutput", "input": answer["structured"]}
        ]
    else:
        content = [{"type": "text", "text": answer["text"]}]
    send(
        {
            "type": "assistant",
            "message": {
                "id": "msg_" + uuid.uuid4().hex[:20],
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "tool_use" if kind == "ok" else "end_turn",
                "usage": usage,
            },
            "parent_tool_use_id": None,
            "session_id": session,
            "uuid": str(uuid.uuid4()),
        }
    )
    if kind == "ok":
        send(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool_id,
                            "content": "Structured output provided successfully",
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": session,
                "uuid": str(uuid.uuid4()),
            }
        )
    extra = {"structured_output": answer["structured"]} if kind == "ok" else {"result": answer["text"]}
    send(result(session, usage=usage, total_cost_usd=answer.get("cost", 0.0123), **extra))
    send({"type": "system", "subtype": "session_state_changed", "state": "idle", "sdk_host_only": True})
    return None


if __name__ == "__main__":
    sys.exit(main())
