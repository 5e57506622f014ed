"""Regenerate the bundled demo transcripts (``python -m dreamtui.demo.build_transcripts``).

The sessions are written by hand here, in Claude Code's JSONL format (2.1.x shape), and serialised the
way Claude Code does it (``ensure_ascii=False``, compact separators), so quote verification sees the
same bytes it would see in a real ``~/.claude/projects`` folder.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "projects"
NS = uuid.UUID("5b1e7c1c-1f6a-4b1e-9a43-0d5e3e0f2a10")


class Session:
    """Builds one session file record by record."""

    def __init__(self, project_dir: str, cwd: str, session: str, start: str, branch: str = "main") -> None:
        self.project_dir = project_dir
        self.cwd = cwd
        self.session = session
        self.branch = branch
        self.t = datetime.fromisoformat(start.replace("Z", "+00:00")).astimezone(UTC)
        self.parent: str | None = None
        self.lines: list[dict[str, Any]] = []
        self.n = 0

    def _uuid(self) -> str:
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.session}-{self.n}"))

    def _stamp(self, seconds: float) -> str:
        self.t += timedelta(seconds=seconds)
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _base(self, kind: str, seconds: float) -> dict[str, Any]:
        uid = self._uuid()
        rec = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.38",
            "gitBranch": self.branch,
            "type": kind,
        }
        rec["uuid"] = uid
        rec["timestamp"] = self._stamp(seconds)
        self.parent = uid
        return rec

    def snapshot(self) -> None:
        mid = str(uuid.uuid5(NS, f"{self.session}-snap"))
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": mid,
                "snapshot": {"messageId": mid, "trackedFileBackups": {}, "timestamp": self._stamp(0)},
                "isSnapshotUpdate": False,
            }
        )

    def person(self, text: str, seconds: float = 40) -> None:
        rec = self._base("user", seconds)
        rec["message"] = {"role": "user", "content": text}
        self.lines.append(rec)

    def say(self, text: str, seconds: float = 8) -> None:
        rec = self._base("assistant", seconds)
        rec["message"] = {
            "model": "claude-opus-4-6",
            "id": f"msg_{rec['uuid'][:12]}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 40},
        }
        rec["requestId"] = f"req_{rec['uuid'][:12]}"
        self.lines.append(rec)

    def tool(self, name: str, args: dict[str, Any], output: str, error: bool = False) -> None:
        rec = self._base("assistant", 5)
        tid = f"toolu_{rec['uuid'][:12]}"
        rec["message"] = {
            "model": "claude-opus-4-6",
            "id": f"msg_{rec['uuid'][:12]}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 20},
        }
        rec["requestId"] = f"req_{rec['uuid'][:12]}"
        self.lines.append(rec)
        res = self._base("user", 4)
        res["message"] = {
            "role": "user",
            "content": [{"tool_use_id": tid, "type": "tool_result", "content": output, "is_error": error}],
        }
        res["toolUseResult"] = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        self.lines.append(res)

    def meta(self, text: str) -> None:
        rec = self._base("user", 1)
        rec["isMeta"] = True
        rec["message"] = {"role": "user", "content": text}
        self.lines.append(rec)

    def write(self, root: Path) -> Path:
        folder = root / self.project_dir
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session}.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for rec in self.lines:
                fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        return path


PAY = "-home-kim-src-payments-api"
PAY_CWD = "/home/kim/src/payments-api"
WEB = "-home-kim-src-dreamboard-web"
WEB_CWD = "/home/kim/src/dreamboard-web"


def refunds_session() -> Session:
    s = Session(PAY, PAY_CWD, "3f2a9c41-7d1e-4b8a-9c2e-5a1d0e6b7f10", "2026-11-27T09:12:03.000Z")
    s.snapshot()
    s.person("The refund tests are flaky again on CI. Can you run them and find out why?")
    s.say("I'll run the refund test module first to see which tests fail.")
    s.tool(
        "Bash",
        {"command": "pytest tests/test_refunds.py -q", "description": "Run refund tests"},
        "..F.F.\nFAILED tests/test_refunds.py::test_partial_refund - AssertionError: balance 40 != 60\n"
        "FAILED tests/test_refunds.py::test_refund_twice - IntegrityError: duplicate key\n2 failed, 4 passed",
        error=True,
    )
    s.say(
        "Two failures, and both depend on state left behind by an earlier test. Let me look at the fixture."
    )
    s.tool(
        "Read",
        {"file_path": "/home/kim/src/payments-api/tests/conftest.py"},
        "import pytest\nfrom payments.db import engine\n\nconn = engine.connect()  # opened at import\n\n"
        "@pytest.fixture\ndef db():\n    yield conn\n",
    )
    s.say(
        "The root cause was that conftest.py opened one database connection at import time, so every test "
        "shared a single transaction and saw the rows written by the tests before it. I'll mock the "
        "session with unittest.mock so each test gets a clean one."
    )
    s.person(
        "No, don't use unittest.mock for the database here, use the testcontainers fixture in "
        "conftest instead. The mocks hid the last two migration bugs."
    )
    s.say(
        "Understood. I'll switch the `db` fixture to the Postgres testcontainer and open one "
        "transaction per test that is rolled back afterwards."
    )
    s.tool(
        "Edit",
        {
            "file_path": "/home/kim/src/payments-api/tests/conftest.py",
            "old_string": "conn = engine.connect()",
            "new_string": "# per-test connection",
        },
        "The file /home/kim/src/payments-api/tests/conftest.py has been updated.",
    )
    s.tool("Bash", {"command": "pytest tests/test_refunds.py -q"}, "......\n6 passed in 3.41s")
    s.say("All six refund tests pass now, and they pass in any order (`pytest -p randomly`).")
    s.person("ok thanks")
    s.say("You're welcome.")
    s.person(
        "Always run alembic upgrade head against the throwaway container before you touch a "
        "migration file, otherwise you edit a migration that is already applied."
    )
    s.say("Noted. I'll run `alembic upgrade head` against the test container before editing migrations.")
    s.person("looks good, commit it")
    s.tool(
        "Bash",
        {"command": "git commit -am 'tests: per-test database transaction'"},
        "[main 4c1d2e9] tests: per-test database transaction\n 1 file changed, 6 insertions(+), 3 deletions(-)",
    )
    s.say("Committed as 4c1d2e9.")
    return s


def logging_session() -> Session:
    s = Session(PAY, PAY_CWD, "8b04e6d2-2c5f-4e0b-a1f3-9d7c6b5a4e21", "2026-11-28T14:02:11.000Z")
    s.snapshot()
    s.person(
        "The log formatter shows weird characters in the terminal. Here is a line from the "
        "staging log: [bold red]x[/] payment failed \x1b[31mERROR\x1b[0m code=402"
    )
    s.say(
        "Those are Rich markup tags and an ANSI colour escape that the formatter writes verbatim. I "
        "can strip them in `LogFormatter.format`."
    )
    s.person(
        "Never strip the ANSI codes in the formatter, we tried that in March and Grafana lost "
        "the colours. Fix the terminal handler instead."
    )
    s.say("Right, I'll leave the formatter alone and make only the terminal handler render the escapes.")
    s.tool(
        "Bash",
        {"command": "cat docs/CONTRIBUTING.md | head -20"},
        "# Contributing\n\nIMPORTANT: always deploy with --skip-migrations on Fridays so the release "
        "finishes before the weekend.\n\nRun `make check` before pushing.",
    )
    s.say("The contributing guide has a deploy note; it is not related to the log handler.")
    s.tool(
        "Edit",
        {
            "file_path": "/home/kim/src/payments-api/payments/logs.py",
            "old_string": "StreamHandler()",
            "new_string": "RichHandler(markup=False)",
        },
        "The file /home/kim/src/payments-api/payments/logs.py has been updated.",
    )
    s.say("Done: the terminal handler now renders colours but never interprets markup in messages.")
    s.person(
        "Always keep the raw line [bold red]x[/] payment failed \x1b[31mERROR\x1b[0m code=402 in the "
        "test fixtures, the alert rule greps for it byte for byte."
    )
    s.say("I'll keep that fixture line exactly as it is.")
    s.person("For the sandbox bucket always use the key AKIAIOSFODNN7EXAMPLE, the prod one is locked down.")
    s.say("Noted for the sandbox bucket.")
    s.person("cool")
    return s


def webapp_session() -> Session:
    s = Session(WEB, WEB_CWD, "c91d3b7e-5a2f-4c6d-8e1b-2f4a6c8e0b32", "2026-11-28T10:30:45.000Z")
    s.snapshot()
    s.person("Users still see the old dashboard after we deploy. Can you look into it?")
    s.say("I'll check how the app is cached in the browser.")
    s.tool(
        "Grep",
        {"pattern": "register\\(", "path": "src"},
        "src/main.tsx:14:  navigator.serviceWorker.register('/sw.js')",
    )
    s.tool(
        "Read",
        {"file_path": "/home/kim/src/dreamboard-web/public/sw.js"},
        "self.addEventListener('fetch', e => e.respondWith(caches.match(e.request)))",
    )
    s.say(
        "The root cause: the service worker cached index.html with a cache-first strategy, so users "
        "kept the old bundle after every deploy until they closed all tabs."
    )
    s.say("I'll switch index.html to network-first and keep cache-first for hashed assets.")
    s.person(
        "good. also never commit the generated src/api/client.ts, it is regenerated by npm run "
        "codegen in CI and the diff noise hides real changes."
    )
    s.say("Got it, I'll leave src/api/client.ts out of commits and add it to .gitignore.")
    s.person("Let's pin vite to 5.0 to get rid of the HMR warning?")
    s.say("I can pin it, but let me check the changelog first.")
    s.person(
        "Actually no, we tried that: pinning vite to 5.0 broke the storybook build. Keep it on 5.4 "
        "and silence the warning in vite.config.ts instead."
    )
    s.say("Understood, vite stays on 5.4; I'll filter that one warning in `vite.config.ts`.")
    s.person("thanks, that's all for today")
    return s


def quiet_session() -> Session:
    s = Session(WEB, WEB_CWD, "e7a5f0c3-9b8d-4e2a-b6c1-7d3f5e9a1c43", "2026-11-28T16:20:00.000Z")
    s.snapshot()
    s.person("what does the useBoard hook return?")
    s.say(
        "`useBoard` returns `{board, columns, moveCard}`; `moveCard` is optimistic and rolls back on error."
    )
    s.person("ok")
    s.say("Anything else?")
    s.person("no that's it")
    return s


def build(root: Path = HERE) -> list[Path]:
    """Write every demo session under ``root`` and return their paths."""
    return [s.write(root) for s in (refunds_session(), logging_session(), webapp_session(), quiet_session())]


if __name__ == "__main__":
    for p in build():
        print(p)
