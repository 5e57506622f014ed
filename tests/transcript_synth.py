"""Synthetic metadata-heavy sessions in the shapes of ``transcript-format.md`` (for tests and benchmarks).

Real sessions can be mostly ``queue-operation``, ``file-history-snapshot``, ``progress`` (hook, bash
and agent progress) and ``system`` hook records, with a few prompts and replies between them; the
shared corpus has few of these, so the digest conformance test and the benchmark write their own.
Nothing here is committed as data: sessions are generated from a seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import orjson

from dreamtui.core.ingest.formats.claude_code import REJECTION_PREFIX

WORDS = [
    "deploy",
    "script",
    "flag",
    "config",
    "lint",
    "test",
    "schema",
    "parser",
    "queue",
    "tail",
    "digest",
    "memory",
    "review",
    "branch",
    "commit",
    "merge",
    "build",
    "cache",
    "token",
    "retry",
    "timeout",
    "logger",
    "handler",
    "window",
    "buffer",
]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:]}"


def session_records(
    rng: random.Random,
    n: int,
    *,
    session: str = "11111111-2222-4333-8444-555555555555",
) -> list[dict[str, Any]]:
    """``n`` records of a metadata-heavy session (about one in eight a prompt or a reply)."""
    out: list[dict[str, Any]] = []
    parent = None
    for i in range(n):
        uid = _uuid(rng)
        ts = f"2026-03-01T{10 + i // 3600 % 10:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        base = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/kim/shapes",
            "sessionId": session,
            "version": "2.1.3",
            "gitBranch": "main",
        }
        roll = rng.random()
        if roll < 0.06:
            shape = rng.random()
            content: Any = _words(rng, 20)
            if shape < 0.2:  # a prompt with a pasted image: text and image blocks
                content = [
                    {"type": "text", "text": content},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo" * rng.randint(1, 40),
                        },
                    },
                ]
            elif shape < 0.3:
                content = f"<command-name>/review</command-name><command-args>{_words(rng, 3)}</command-args>"
            elif shape < 0.35:
                content = "[Request interrupted by user]"
            rec = {
                **base,
                "type": "user",
                "message": {"role": "user", "content": content},
                "uuid": uid,
                "timestamp": ts,
            }
            if shape > 0.97:  # harness text in a user record
                rec["isMeta"] = True
        elif roll < 0.12:
            mid = f"msg_{rng.getrandbits(64):016x}"
            rec = {
                **base,
                "message": {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [{"type": "text", "text": _words(rng, 30)}],
                    "stop_reason": None,
                    "usage": {"input_tokens": 3, "output_tokens": 9},
                },
                "requestId": f"req_{i}",
                "type": "assistant",
                "uuid": uid,
                "timestamp": ts,
            }
        elif roll < 0.16:
            tid = f"toolu_{i:08d}"
            rec = {
                **base,
                "message": {
                    "id": f"msg_t{i}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [
                        {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "make test"}}
                    ],
                },
                "type": "assistant",
                "uuid": uid,
                "timestamp": ts,
            }
        elif roll < 0.20 and rng.random() < 0.1:  # a rejected tool call, with the person's reason
            said = _words(rng, 12)
            result = REJECTION_PREFIX + " " + said
            rec = {
                **base,
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "content": result,
                            "is_error": True,
                            "tool_use_id": f"toolu_{i:08d}",
                        }
                    ],
                },
                "uuid": uid,
                "timestamp": ts,
                "toolUseResult": "Error: " + result,
            }
        elif roll < 0.20:
            rec = {
                **base,
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": f"toolu_{i:08d}",
                            "type": "tool_result",
                            "content": _words(rng, 200),
                            "is_error": rng.random() < 0.2,
                        }
                    ],
                },
                "uuid": uid,
                "timestamp": ts,
                "toolUseResult": {"stdout": _words(rng, 50), "stderr": ""},
            }
        elif roll < 0.40:
            op = rng.choice(["enqueue", "dequeue", "remove", "popAll", "dequeue"])
            rec = {"type": "queue-operation", "operation": op, "timestamp": ts, "sessionId": session}
            if op in ("enqueue", "popAll") or rng.random() < 0.3:
                rec["content"] = _words(rng, 8)
        elif roll < 0.60:
            rec = {
                "type": "file-history-snapshot",
                "messageId": uid,
                "isSnapshotUpdate": rng.random() < 0.5,
                "snapshot": {
                    "messageId": uid,
                    "timestamp": ts,
                    "trackedFileBackups": {
                        f"src/file{j}.py": {
                            "backupFileName": f"{uid[:8]}@v{j}",
                            "version": j,
                            "backupTime": ts,
                        }
                        for j in range(rng.randint(1, 12))
                    },
                },
            }
        elif roll < 0.80:
            kind = rng.choice(["hook_progress", "bash_progress", "agent_progress"])
            data: dict[str, Any] = {"type": kind}
            if kind == "hook_progress":
                data.update(hookEvent="PostToolUse", hookName="PostToolUse:Bash", command="./hooks/check.sh")
            elif kind == "bash_progress":
                data.update(output=_words(rng, 40), fullOutput=_words(rng, 120), elapsedTimeSeconds=3)
            else:
                data.update(
                    agentId="a1b2c3",
                    prompt=_words(rng, 10),
                    message={
                        "type": "assistant",
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": _words(rng, 20)}],
                        },
                    },
                )
            rec = {
                **base,
                "type": "progress",
                "data": data,
                "toolUseID": f"toolu_{i:08d}",
                "parentToolUseID": f"toolu_{i:08d}",
                "uuid": uid,
                "timestamp": ts,
            }
        elif roll < 0.90:
            rec = {
                **base,
                "type": "system",
                "subtype": "stop_hook_summary",
                "hookCount": 2,
                "hookInfos": [{"command": "./hooks/stop.sh"}],
                "hookErrors": [],
                "preventedContinuation": False,
                "stopReason": "",
                "hasOutput": False,
                "level": "suggestion",
                "uuid": uid,
                "timestamp": ts,
            }
        elif roll < 0.95:
            rec = {
                **base,
                "type": "attachment",
                "attachment": {
                    "type": "hook_success",
                    "hookName": "SessionStart",
                    "content": _words(rng, 30),
                },
                "uuid": uid,
                "timestamp": ts,
            }
        else:
            rec = {
                "type": rng.choice(["last-prompt", "permission-mode", "ai-title"]),
                "sessionId": session,
                "lastPrompt": _words(rng, 6),
                "permissionMode": "default",
                "aiTitle": _words(rng, 3),
            }
        if "uuid" in rec:
            parent = rec["uuid"]
        out.append(rec)
    return out


def reorder(value: Any, order: Callable[[list[str]], list[str]]) -> Any:
    """``value`` with the keys of every object (at every depth) put in ``order``."""
    if isinstance(value, dict):
        return {k: reorder(value[k], order) for k in order(list(value))}
    if isinstance(value, list):
        return [reorder(v, order) for v in value]
    return value


def write_jsonl(records: list[Any]) -> bytes:
    """Compact JSON lines, as Claude Code writes them."""
    return b"".join(orjson.dumps(r) + b"\n" for r in records)
