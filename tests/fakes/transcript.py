"""Write small Claude Code transcripts (JSONL, encoded as Claude Code writes them) for end-to-end tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "5e55a0a0-1111-4222-8333-444455556666"


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_session(
    root: Path,
    turns: list[tuple[str, str]],
    *,
    project: str = "-home-kim-shop",
    session: str = SESSION,
    cwd: str = "/home/kim/shop",
) -> Path:
    """Write ``turns`` as ``root/project/session.jsonl`` (every record in ``cwd``); roles: person,
    assistant, tool (a tool result)."""
    folder = root / project
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    lines: list[str] = []
    parent: str | None = None
    for i, (role, text) in enumerate(turns, start=1):
        uuid = f"00000000-0000-4000-8000-{i:012d}"
        base = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.0.14",
            "gitBranch": "main",
            "uuid": uuid,
            "timestamp": f"2026-11-29T10:{i // 60:02d}:{i % 60:02d}.000Z",
        }
        if role == "person":
            rec = {**base, "type": "user", "message": {"role": "user", "content": text}}
        elif role == "assistant":
            rec = {
                **base,
                "type": "assistant",
                "requestId": f"req_{i}",
                "message": {
                    "id": f"msg_{i}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 10, "output_tokens": 10},
                },
            }
        elif role == "tool":
            rec = {
                **base,
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_{i}",
                            "content": text,
                            "is_error": False,
                        }
                    ],
                },
                "toolUseResult": {"stdout": text, "stderr": "", "interrupted": False},
            }
        else:
            raise ValueError(role)
        lines.append(_dump(rec))
        parent = uuid
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
