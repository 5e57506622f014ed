"""Regenerate the bundled demo transcripts (``python -m dreamtui.demo.build_transcripts``).

The sessions are written by hand here, each in its agent's own format and serialised the way the agent
does it, so quote verification sees the same bytes it would see in the agent's real folder:

- Claude Code: JSONL (2.1.x shape), ``ensure_ascii=False`` and compact separators, in ``projects/``;
- Codex CLI: a rollout (0.125 shape: ``session_meta``, ``turn_context``, ``response_item`` and
  ``event_msg`` lines), compact JSON lines, in ``agents/codex/sessions/YYYY/MM/DD/``;
- Gemini CLI: one JSON document per chat (2026 shape: ``Part[]`` user content, ``kind``), written as
  ``JSON.stringify(record, null, 2)`` with no final newline, in ``agents/gemini/tmp/<project hash>/chats/``
  (the hash is the SHA-256 of the project's folder, which the chat's tool calls name);
- Aider: the markdown chat history Aider appends to (``aider/io.py``'s shape), kept in the package as
  ``agents/aider/<project>/aider.chat.history.md`` (a dotted name would be left out of the wheel) and
  copied by :func:`dreamtui.demo.prepare_demo` to ``.aider.chat.history.md``.

Shapes modelled on the real files in ``tests/fixtures/agents/``; the content is the demo's own.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "projects"
AGENTS = Path(__file__).resolve().parent / "agents"
"""The other agents' demo sessions: ``codex/sessions``, ``gemini/tmp``, ``aider/<project>``."""
AIDER_HISTORY = "aider.chat.history.md"
"""The Aider history's name in the package (``.aider.chat.history.md`` once copied)."""
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


def _ms(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _at(start: str) -> datetime:
    return datetime.fromisoformat(start.replace("Z", "+00:00")).astimezone(UTC)


class CodexRollout:
    """Builds one Codex CLI rollout (``rollout-<local time>-<session id>.jsonl``) line by line."""

    def __init__(self, cwd: str, session: str, start: str, branch: str = "main") -> None:
        self.cwd, self.session = cwd, session
        self.t = _at(start)
        self.start = self.t
        self.lines: list[dict[str, Any]] = []
        self.turn = ""
        self.n = 0
        self.tokens = 0
        self._line(
            "session_meta",
            {
                "id": session,
                "timestamp": _ms(self.t),
                "cwd": cwd,
                "originator": "codex-tui",
                "cli_version": "0.125.0",
                "source": "cli",
                "model_provider": "openai",
                "git": {
                    "commit_hash": hashlib.sha1(session.encode()).hexdigest(),
                    "branch": branch,
                    "repository_url": "git@github.com:kim/payments-api.git",
                },
            },
            0.8,
        )

    def _line(self, kind: str, payload: dict[str, Any], seconds: float = 0.01) -> None:
        self.t += timedelta(seconds=seconds)
        self.lines.append({"timestamp": _ms(self.t), "type": kind, "payload": payload})

    def _id(self, what: str) -> str:
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.session}-{what}-{self.n}"))

    def person(self, text: str, seconds: float = 30) -> None:
        self.turn = self._id("turn")
        self._line(
            "event_msg",
            {
                "type": "task_started",
                "turn_id": self.turn,
                "started_at": int((self.t + timedelta(seconds=seconds)).timestamp()),
                "model_context_window": 258400,
                "collaboration_mode_kind": "default",
            },
            seconds,
        )
        self._line(
            "turn_context",
            {
                "turn_id": self.turn,
                "cwd": self.cwd,
                "current_date": self.t.strftime("%Y-%m-%d"),
                "timezone": "Europe/Berlin",
                "approval_policy": "on-request",
                "sandbox_policy": {
                    "type": "workspace-write",
                    "writable_roots": [],
                    "network_access": False,
                    "exclude_tmpdir_env_var": False,
                    "exclude_slash_tmp": False,
                },
                "model": "gpt-5.5",
                "personality": "pragmatic",
                "summary": "auto",
            },
        )
        self._line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )
        self._line(
            "event_msg",
            {"type": "user_message", "message": text, "images": [], "local_images": [], "text_elements": []},
        )

    def shell(self, cmd: str, output: str, code: int = 0) -> None:
        call = "call_" + self._id("call").replace("-", "")[:24]
        args = {"cmd": cmd, "workdir": self.cwd, "yield_time_ms": 1000, "max_output_tokens": 12000}
        self._line(
            "response_item",
            {"type": "function_call", "name": "exec_command", "arguments": json.dumps(args), "call_id": call},
            4,
        )
        self._tokens(180)
        self._line(
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": call,
                "turn_id": self.turn,
                "command": ["/bin/bash", "-lc", cmd],
                "cwd": self.cwd,
                "stdout": output,
                "stderr": "",
                "aggregated_output": output,
                "exit_code": code,
                "formatted_output": output,
            },
            1.2,
        )
        self._line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": f"Chunk ID: {call[5:11]}\nWall time: 1.1820 seconds\nProcess exited with code {code}\n"
                f"Original token count: {len(output) // 4}\nOutput:\n{output}",
            },
        )

    def say(self, text: str, seconds: float = 6, final: bool = False) -> None:
        self._line("event_msg", {"type": "agent_message", "message": text}, seconds)
        item: dict[str, Any] = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }
        if final:
            item["phase"] = "final_answer"
        self._line("response_item", item)
        self._tokens(len(text) // 4)
        if final:
            self._line(
                "event_msg",
                {"type": "task_complete", "turn_id": self.turn, "last_agent_message": text},
            )

    def _tokens(self, out: int) -> None:
        self.tokens += 9000 + out
        self._line(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": {
                        "input_tokens": self.tokens,
                        "cached_input_tokens": self.tokens // 2,
                        "output_tokens": out,
                        "reasoning_output_tokens": 0,
                        "total_tokens": self.tokens + out,
                    },
                    "model_context_window": 258400,
                },
                "rate_limits": None,
            },
        )

    def write(self, root: Path = AGENTS / "codex" / "sessions") -> Path:
        folder = root / self.start.strftime("%Y/%m/%d")
        folder.mkdir(parents=True, exist_ok=True)
        local = self.start + timedelta(hours=1)  # Codex names the file by local time (Europe/Berlin)
        path = folder / f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{self.session}.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for rec in self.lines:
                fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        return path


def codex_session() -> CodexRollout:
    s = CodexRollout(PAY_CWD, "019ac8e2-4b17-7f30-9d2a-6c0e5b3f1a87", "2026-11-27T14:05:31.204Z")
    s.person("Stripe webhooks sometimes time out on charge.refunded. Can you look at the handler?")
    s.say("I'll read the webhook handler and its tests first.")
    s.shell(
        "sed -n '1,60p' payments/webhooks.py",
        "def handle_refunded(event):\n    for attempt in range(5):\n        try:\n"
        "            ledger.record_refund(event.data)\n            break\n        except LedgerBusy:\n"
        "            time.sleep(2 ** attempt)\n    return Response(status=200)\n",
    )
    s.say(
        "The handler retries the ledger write up to five times with a sleep in between, inside the "
        "request, so a busy ledger keeps Stripe waiting past its 10 second timeout. I'll shorten the "
        "backoff so the retries fit in the timeout.",
        final=True,
    )
    s.person(
        "No, don't retry inside the webhook handler, put the event on the outbox queue instead and "
        "answer 200 at once. Stripe retries failed webhooks for three days anyway."
    )
    s.say("Understood: the handler will enqueue the event on the outbox and return 200 right away.")
    s.shell(
        "pytest tests/test_webhooks.py -q",
        "......\n6 passed in 1.92s\n",
    )
    s.say(
        "Done: `handle_refunded` now puts the event on the outbox queue and answers 200; the outbox "
        "worker does the ledger write with its own retries. The webhook tests pass.",
        final=True,
    )
    s.person("thanks")
    s.say("You're welcome.", final=True)
    return s


GEMINI_MODEL = "gemini-3-pro-preview"


class GeminiChat:
    """Builds one Gemini CLI chat document (``session-<start>-<id8>.json``)."""

    def __init__(self, cwd: str, session: str, start: str) -> None:
        self.cwd, self.session = cwd, session
        self.t = _at(start)
        self.start = self.t
        self.messages: list[dict[str, Any]] = []
        self.n = 0

    def _id(self) -> str:
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.session}-{self.n}"))

    def _stamp(self, seconds: float) -> str:
        self.t += timedelta(seconds=seconds)
        return _ms(self.t)

    def person(self, text: str, seconds: float = 40) -> None:
        self.messages.append(
            {"id": self._id(), "timestamp": self._stamp(seconds), "type": "user", "content": [{"text": text}]}
        )

    def say(
        self,
        text: str,
        thought: str,
        tools: tuple[tuple[str, str, dict[str, Any], str, str], ...] = (),
        seconds: float = 7,
    ) -> None:
        """A reply (``text``, maybe empty beside tool calls), one thought ``"Subject: description"``,
        and its tool calls ``(name, display name, args, description, output)``."""
        thinking = self._stamp(seconds - 2)
        msg: dict[str, Any] = {
            "id": self._id(),
            "timestamp": self._stamp(2),
            "type": "gemini",
            "content": text,
            "thoughts": [
                {
                    "subject": thought.split(":")[0],
                    "description": thought.split(":", 1)[1].strip(),
                    "timestamp": thinking,
                }
            ],
            "tokens": {
                "input": 7000 + 40 * self.n,
                "output": len(text) // 4,
                "cached": 5400,
                "thoughts": 60,
                "tool": 0,
                "total": 7060 + 40 * self.n + len(text) // 4,
            },
            "model": GEMINI_MODEL,
        }
        calls: list[dict[str, Any]] = []
        for name, display, args, description, output in tools:
            cid = f"{name}_{int(self.t.timestamp() * 1000)}_{len(calls)}"
            calls.append(
                {
                    "id": cid,
                    "name": name,
                    "args": args,
                    "result": [
                        {"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}
                    ],
                    "status": "success",
                    "timestamp": self._stamp(0.2),
                    "resultDisplay": "" if name == "read_file" else output,
                    "description": description,
                    "displayName": display,
                    "renderOutputAsMarkdown": name == "read_file",
                }
            )
        if calls:
            msg["toolCalls"] = calls
        self.messages.append(msg)

    def project_hash(self) -> str:
        return hashlib.sha256(self.cwd.encode("utf-8")).hexdigest()

    def write(self, root: Path = AGENTS / "gemini" / "tmp") -> Path:
        folder = root / self.project_hash() / "chats"
        folder.mkdir(parents=True, exist_ok=True)
        doc = {
            "sessionId": self.session,
            "projectHash": self.project_hash(),
            "startTime": _ms(self.start),
            "lastUpdated": self.messages[-1]["timestamp"],
            "messages": self.messages,
            "kind": "main",
        }
        path = folder / f"session-{self.start.strftime('%Y-%m-%dT%H-%M')}-{self.session[:8]}.json"
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8", newline="\n")
        return path


def gemini_session() -> GeminiChat:
    s = GeminiChat(PAY_CWD, "5d2e8a17-93c4-4f0b-b6e1-2a7c9d4e0f58", "2026-11-28T08:41:09.517Z")
    s.person("The monthly payout report is off by a cent for some merchants. Can you find out why?")
    s.say(
        "",
        "Locating the Rounding: I'll read the payout report code to see how amounts are summed.",
        (
            (
                "read_file",
                "ReadFile",
                {"file_path": f"{PAY_CWD}/payments/reports/payouts.py"},
                "payments/reports/payouts.py",
                "def monthly_total(rows):\n    total = 0.0\n    for row in rows:\n"
                "        total += float(row.amount) / 100\n    return round(total, 2)\n",
            ),
        ),
    )
    s.say(
        "The report converts each amount to a float in euros before summing, so the rounding errors add "
        "up over a month of payouts. I'll switch the sum to `math.fsum` and round once at the end.",
        "Diagnosing the Drift: Float addition accumulates error; fsum is the smallest change.",
    )
    s.person(
        "Never use floats for money in this repo, keep amounts as integer cents in the Money type "
        "and format them only at the edge. fsum would just hide the bug."
    )
    s.say(
        "Understood. I'll sum the integer cents through `Money` and format the euro value only when "
        "the report is rendered.",
        "Reworking the Sum: Keep integer cents end to end and format at the edge.",
        (
            (
                "replace",
                "Edit",
                {
                    "file_path": f"{PAY_CWD}/payments/reports/payouts.py",
                    "old_string": "    total = 0.0\n    for row in rows:\n        total += float(row.amount) / 100\n"
                    "    return round(total, 2)\n",
                    "new_string": "    return sum((Money(row.amount) for row in rows), Money(0))\n",
                    "instruction": "Sum payouts as integer cents with Money.",
                },
                "payments/reports/payouts.py: Sum payouts as integer cents with Money.",
                f"Successfully modified file: {PAY_CWD}/payments/reports/payouts.py (1 replacements).",
            ),
            (
                "run_shell_command",
                "Shell",
                {"command": "pytest tests/reports -q", "description": "Run the report tests."},
                "pytest tests/reports -q [current working directory /home/kim/src/payments-api] (Run the report tests.)",
                "Command: pytest tests/reports -q\nDirectory: (root)\nOutput: ....\n4 passed in 0.88s\n"
                "Error: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 48211",
            ),
        ),
    )
    s.say(
        "The payout totals are summed in integer cents now and the report tests pass.",
        "Confirming the Fix: The report tests pass with integer cents.",
    )
    s.person("great, thanks")
    s.say("Glad to help.", "Closing Out: Nothing else was asked.")
    return s


def aider_history() -> str:
    """One Aider session in payments-api, as Aider appends it to the project's history."""
    return (
        "\n# aider chat started at 2026-11-28 11:02:47\n\n"
        "> /home/kim/.local/bin/aider --model sonnet  \n"
        "> Aider v0.86.1  \n"
        "> Main model: anthropic/claude-sonnet-4-5-20250929 with diff edit format, infinite output  \n"
        "> Weak model: anthropic/claude-haiku-4-5-20251001  \n"
        "> Git repo: .git with 214 files  \n"
        "> Repo-map: using 4096 tokens, auto refresh  \n\n"
        "#### /add payments/currency.py  \n\n"
        "> Added payments/currency.py to the chat  \n\n"
        "#### Add JPY to the supported currencies.  \n\n"
        "I'll add JPY to `SUPPORTED` with zero minor units, since the yen has no subunit.\n\n"
        "payments/currency.py\n"
        "```python\n"
        "<<<<<<< SEARCH\n"
        'SUPPORTED = {"EUR": 2, "USD": 2, "GBP": 2}\n'
        "=======\n"
        'SUPPORTED = {"EUR": 2, "USD": 2, "GBP": 2, "JPY": 0}\n'
        ">>>>>>> REPLACE\n"
        "```\n\n"
        "> Tokens: 5.1k sent, 96 received. Cost: $0.02 message, $0.02 session.  \n"
        "> Applied edit to payments/currency.py  \n"
        "> Commit 7e3b1d2 feat: support JPY  \n\n"
        "#### Always add a line under Unreleased in CHANGELOG.md when you add a currency, the finance "
        "team reads the changelog to update their rate sheets.  \n\n"
        "I'll add the entry under `## Unreleased`.\n\n"
        "CHANGELOG.md\n"
        "```markdown\n"
        "<<<<<<< SEARCH\n"
        "## Unreleased\n"
        "=======\n"
        "## Unreleased\n\n"
        "- Added JPY (zero minor units) to the supported currencies.\n"
        ">>>>>>> REPLACE\n"
        "```\n\n"
        "> Tokens: 5.4k sent, 88 received. Cost: $0.02 message, $0.04 session.  \n"
        "> Applied edit to CHANGELOG.md  \n"
        "> Commit 2a9f0c4 docs: changelog entry for JPY  \n\n"
        "#### thanks  \n\n"
        "You're welcome!\n\n"
        "> Tokens: 5.5k sent, 4 received. Cost: $0.02 message, $0.06 session.  \n"
    )


def write_aider(root: Path = AGENTS / "aider") -> Path:
    folder = root / "payments-api"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / AIDER_HISTORY
    path.write_text(aider_history(), encoding="utf-8", newline="\n")
    return path


def build(root: Path = HERE, agents: Path = AGENTS) -> list[Path]:
    """Write every demo session (Claude Code's under ``root``, the other agents' under ``agents``)
    and return their paths."""
    paths = [s.write(root) for s in (refunds_session(), logging_session(), webapp_session(), quiet_session())]
    paths.append(codex_session().write(agents / "codex" / "sessions"))
    paths.append(gemini_session().write(agents / "gemini" / "tmp"))
    paths.append(write_aider(agents / "aider"))
    return paths


if __name__ == "__main__":
    for p in build():
        print(p)
