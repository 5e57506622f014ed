"""A scripted stand-in for the Claude Code CLI (``claude_cli.py``), as a test sees it.

``FakeClaudeCode(folder)`` writes an executable ``claude`` beside its script and log; pass
``fake.cli`` as the SDK's ``cli_path`` (or set ``DREAMTUI_CLAUDE_CLI`` to it) and script the
answers with :meth:`answer`; :meth:`calls` returns what each ``claude`` run saw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

STAND_IN = Path(__file__).with_name("claude_cli.py")


def ok(candidates: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """A successful call whose structured output holds ``candidates``."""
    return {"kind": "ok", "structured": {"candidates": candidates or []}, **extra}


def verdicts(*items: tuple[int, int, str]) -> dict[str, Any]:
    """A successful dedup-judge call: ``(item, same_as, reason)`` per verdict."""
    return {
        "kind": "ok",
        "structured": {"verdicts": [{"item": i, "same_as": s, "reason": r} for i, s, r in items]},
    }


def lesson(quote: str, claim: str, kind: str = "feedback", scope: str = "project") -> dict[str, Any]:
    return {
        "claim": claim,
        "why": "The person said so.",
        "how_to_apply": "Whenever this comes up again.",
        "type": kind,
        "scope": scope,
        "quote": quote,
    }


class FakeClaudeCode:
    """The stand-in's folder: ``claude`` (the executable), ``script.json``, ``calls.jsonl``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.cli = self.folder / "claude"
        self.cli.write_text(
            f'#!/bin/sh\nFAKE_CLAUDE_DIR="{self.folder}" exec "{sys.executable}" "{STAND_IN}" "$@"\n',
            encoding="utf-8",
        )
        self.cli.chmod(0o755)
        self.answer(ok())

    def answer(self, *answers: dict[str, Any]) -> None:
        """The answers of the next calls, in order (the last one repeats); restarts the count."""
        (self.folder / "script.json").write_text(json.dumps(list(answers)), encoding="utf-8")
        (self.folder / "counter").unlink(missing_ok=True)

    def calls(self) -> list[dict[str, Any]]:
        """What every ``claude`` run saw so far: argv, flags, cwd, env, stdin messages, problems."""
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]

    def prompts(self) -> list[str]:
        """The user message of every call."""
        out = []
        for call in self.calls():
            for msg in call["stdin"]:
                if msg.get("type") == "user":
                    out.append(msg["message"]["content"])
        return out
