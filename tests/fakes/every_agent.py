"""One good session of every registered format (``formats.FORMATS``), each where its agent writes it
under a temporary HOME, and each changed live as its agent changes it (lines appended; a whole
document rewritten atomically and in place; rows committed in WAL mode; Aider's history appended in
its project), and a person's good night written into it as its agent writes a new turn
(:func:`goodnight_writers`, OpenCode's older ``storage/`` layout besides). Used by the hostile-file
matrix (``tests/test_hostile_formats.py``) and the watch latency bench
(``tests/bench/bench_watch_latency.py``): a new format gives its session, its live change and its
good night here."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats import aider, copilot_history, cursor, gemini, opencode
from dreamtui.core.repository import encode_path
from fakes.agent_chats import write_copilot_history_session, write_copilot_session, write_gemini_chat
from fakes.agent_dbs import CHILD, SESSION, build_cursor_store, build_opencode_db, build_opencode_storage
from fakes.codex_rollout import write_rollout
from fakes.transcript import write_session

WRITTEN = 1773180000.0  # 2026-03-10T22:00:00Z: an hour before the tests' clock, past the quiet period
CURSOR_CWD = "/home/dev/proj"
SQLITE = {opencode.name, cursor.name}
DOCUMENT = {gemini.name, copilot_history.name}  # a JSON document rewritten whole
OPENCODE_STORAGE = "opencode (storage/)"
"""OpenCode's older layout (``storage/`` JSON files), a live session of its own beside the database."""


def homes(tmp: Path) -> dict[str, Path]:
    """The agents' homes an environment variable moves (``CODEX_HOME`` and the like)."""
    return {
        "codex": tmp / "codex-home",
        "gemini": tmp / "gemini-home",
        "copilot": tmp / "copilot-home",
    }


def agent_env(tmp: Path) -> dict[str, str]:
    """The environment that puts every agent's default folder under ``tmp`` (set it, then clear
    ``gemini._resolved``)."""
    home = homes(tmp)
    return {
        "HOME": str(tmp / "home"),  # Cursor's ~/.cursor
        "XDG_DATA_HOME": str(tmp / "home" / ".local" / "share"),  # OpenCode's
        "CODEX_HOME": str(home["codex"]),
        "GEMINI_CLI_HOME": str(home["gemini"]),
        "COPILOT_HOME": str(home["copilot"]),
    }


def touch(path: Path) -> None:
    os.utime(path, (WRITTEN, WRITTEN), follow_symlinks=False)


def write_good(name: str, tmp: Path, repo: Path, transcripts: Path, lesson: str) -> tuple[Path, list[str]]:
    """One good session of format ``name`` at its default place under ``tmp`` (Claude Code's under
    ``transcripts``, Aider's in ``repo``, every session run in ``repo``), the person saying ``lesson``:
    (its file, its addresses)."""
    cwd = str(repo)
    home = homes(tmp)
    turns = [("person", lesson), ("assistant", "Understood, I will keep to that.")]
    if name == "claude-code":
        path = write_session(transcripts, turns, project=encode_path(cwd), cwd=cwd)
    elif name == "codex":
        path = write_rollout(home["codex"] / "sessions", cwd, turns)
    elif name == "gemini-cli":
        path = write_gemini_chat(home["gemini"], cwd, turns)
    elif name == "copilot-cli":
        path = write_copilot_session(home["copilot"], cwd, turns)
    elif name == copilot_history.name:
        path = write_copilot_history_session(home["copilot"], cwd, turns)
    elif name == "opencode":
        path = build_opencode_db(tmp / "home" / ".local" / "share" / "opencode", wal=False)
        touch(path)
        return path, [str(opencode.address(path, SESSION)), str(opencode.address(path, CHILD))]
    elif name == "cursor":
        path = build_cursor_store(
            tmp / "home" / ".cursor" / "chats" / cursor.cwd_hash(CURSOR_CWD) / "4f1c2a9e-6d3b-4c8e"
        )
    elif name == "aider":
        path = repo / aider.HISTORY_NAME
        path.write_text(
            "\n# aider chat started at 2026-03-10 21:00:00\n\n> aider --model sonnet  \n\n"
            f"#### {lesson}  \n\nUnderstood, I will keep to that.\n\n> Tokens: 1.2k sent, 80 received.  \n",
            encoding="utf-8",
        )
    else:  # pragma: no cover - a new format: give it a good session here
        raise AssertionError(f"no good session written for the format {name}")
    touch(path)
    return path, [str(path)]


def live_changes(name: str, path: Path) -> list[Callable[[], None]]:
    """The ways the agent of format ``name`` changes its live session file ``path``, each a call that
    returns once the change is written (committed, for a database)."""
    if name in SQLITE:

        def insert_in_wal() -> None:
            conn = sqlite3.connect(path)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            with conn:
                conn.execute("CREATE TABLE IF NOT EXISTS dreamtui_live (x)")
                conn.execute("INSERT INTO dreamtui_live VALUES (1)")
            conn.close()

        return [insert_in_wal]
    data = path.read_bytes()

    def append() -> None:
        with path.open("ab") as fh:
            fh.write(data[-200:] if name == aider.name else data.splitlines(keepends=True)[-1])

    def rewrite_atomically() -> None:
        tmp = path.with_name(path.name + ".tmp-1")
        tmp.write_bytes(data + b"\n")
        os.replace(tmp, path)

    def rewrite_in_place() -> None:
        path.write_bytes(data + b"\n\n")

    if formats.named(name).layout == "records" and name != aider.name:  # a document rewritten whole
        return [rewrite_atomically, rewrite_in_place]
    return [append]  # appended lines, or Aider's appended markdown


def delivered(path: Path, paths: list[Path]) -> bool:
    """Whether a watcher's batch ``paths`` names the live file ``path`` (or its write-ahead log)."""
    return path in paths or Path(f"{path}-wal") in paths


# -- a person saying good night in a live session, as each agent writes it ------------------------------


def goodnight_writers(tmp: Path, repo: Path, transcripts: Path, lesson: str) -> dict[str, GoodnightWriter]:
    """For every registered format, and OpenCode's older ``storage/`` layout besides its database
    (:data:`OPENCODE_STORAGE`): a live session laid where its agent keeps it (:func:`write_good`; the
    storage session in the same OpenCode data folder as the database), and what its agent writes when
    the person says good night in it (:class:`GoodnightWriter`)."""
    out: dict[str, GoodnightWriter] = {}
    for name in formats.FORMATS:
        path, addresses = write_good(name, tmp, repo, transcripts, lesson)
        out[name] = GoodnightWriter(
            name, Path(formats.split_address(addresses[0])[0]), tmp, repo, transcripts, lesson
        )
    data = tmp / "home" / ".local" / "share" / "opencode"
    session = build_opencode_storage(data)
    out[OPENCODE_STORAGE] = GoodnightWriter(OPENCODE_STORAGE, session, tmp, repo, transcripts, lesson)
    return out


class GoodnightWriter:
    """One live session (``path``: the file the watcher hears; a database's, not its WAL) and the ways
    its agent writes a new turn of the person's, each a call ``(n)`` that returns once the write is
    done (committed, for a database), the person saying ``Thanks, good night {n}`` (``n`` new each
    time):

    - JSON lines (Claude Code, Codex CLI, Copilot CLI): the new records appended, as the agent appends
      them (the same records its writer in ``tests/fakes`` gives for the longer session);
    - a whole JSON document (Gemini CLI's, Copilot CLI's older history documents): rewritten in place
      (truncated and written) and, in turn, atomically (a temporary file renamed over it);
    - OpenCode's and Cursor CLI's databases: the rows inserted through a second connection in WAL mode
      (automatic checkpoints off, so the change stays in ``-wal`` as while the agent runs);
    - OpenCode's older layout: the message's file, then its part's file, each written whole;
    - Aider's history: the markdown block appended.
    """

    def __init__(self, name: str, path: Path, tmp: Path, repo: Path, transcripts: Path, lesson: str) -> None:
        self.name, self.path, self.repo, self.transcripts = name, path, repo, transcripts
        self.home = homes(tmp)
        self.turns = [("person", lesson), ("assistant", "Understood, I will keep to that.")]
        self.scratch = Path(tempfile.mkdtemp(prefix="agent-", dir=tmp))
        """Where the longer session is written first, to take its new bytes."""

    @property
    def ways(self) -> list[Callable[[int], None]]:
        if self.name in DOCUMENT:
            return [self.rewrite_in_place, self.rewrite_atomically]
        if self.name in SQLITE:
            return [self.insert_in_wal]
        if self.name == OPENCODE_STORAGE:
            return [self.write_message_files]
        return [self.append]

    @staticmethod
    def text(n: int) -> str:
        return f"Thanks, good night {n}"

    # -- whole files written by the fakes' writers ---------------------------------------------------

    def _longer(self, n: int) -> bytes:
        """The session's bytes with the person's good night ``n`` and a reply, as its writer gives them."""
        self.turns += [("person", self.text(n)), ("assistant", "Good night!")]
        cwd, scratch = str(self.repo), self.scratch
        if self.name == "claude-code":
            path = write_session(scratch, self.turns, project=encode_path(cwd), cwd=cwd)
        elif self.name == "codex":
            path = write_rollout(scratch, cwd, self.turns)
        elif self.name == gemini.name:
            path = write_gemini_chat(scratch, cwd, self.turns)
        elif self.name == "copilot-cli":
            path = write_copilot_session(scratch, cwd, self.turns)
        elif self.name == copilot_history.name:
            path = write_copilot_history_session(scratch, cwd, self.turns)
        else:  # pragma: no cover - a new format: say how its agent writes
            raise AssertionError(f"no live writer for the format {self.name}")
        return path.read_bytes()

    def append(self, n: int) -> None:
        if self.name == aider.name:
            block = f"\n#### {self.text(n)}  \n\nGood night!\n\n> Tokens: 1.3k sent, 20 received.  \n"
            with self.path.open("ab") as fh:
                fh.write(block.encode())
            return
        old, new = self.path.read_bytes(), self._longer(n)
        if new.startswith(old):
            tail = new[len(old) :]
        else:  # a record near the end changed: append only the lines the file lacks
            have = set(old.splitlines())
            tail = b"".join(line for line in new.splitlines(keepends=True) if line.rstrip(b"\n") not in have)
        with self.path.open("ab") as fh:
            fh.write(tail)

    def rewrite_in_place(self, n: int) -> None:
        self.path.write_bytes(self._longer(n))

    def rewrite_atomically(self, n: int) -> None:
        tmp = self.path.with_name(self.path.name + f".tmp-{n}")
        tmp.write_bytes(self._longer(n))
        os.replace(tmp, self.path)

    # -- databases --------------------------------------------------------------------------------

    def insert_in_wal(self, n: int) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.execute("BEGIN IMMEDIATE")
            if self.name == opencode.name:
                when = 1791600000000 + 1000 * n
                message = f"msg_live{n:06d}"
                info = {"role": "user", "time": {"created": when}, "agent": "build"}
                conn.execute(
                    "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                    (message, SESSION, when, when, json.dumps(info)),
                )
                part = {"type": "text", "text": self.text(n)}
                conn.execute(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    (f"prt_live{n:06d}", message, SESSION, when, when, json.dumps(part)),
                )
            else:
                query = f"<user_query>\n{self.text(n)}\n</user_query>"
                blob = json.dumps({"role": "user", "content": [{"type": "text", "text": query}]}).encode()
                conn.execute("INSERT INTO blobs VALUES (?, ?)", (hashlib.sha256(blob).hexdigest(), blob))
            conn.execute("COMMIT")
        finally:
            conn.close()

    # -- OpenCode's older layout ------------------------------------------------------------------

    def write_message_files(self, n: int) -> None:
        storage = self.path.parents[2]
        session = self.path.stem
        when = 1791600000000 + 1000 * n
        message, part = f"msg_live{n:06d}", f"prt_live{n:06d}"
        info = {"id": message, "sessionID": session, "role": "user", "time": {"created": when}}
        body = {"id": part, "sessionID": session, "messageID": message, "type": "text", "text": self.text(n)}
        for target, obj in (
            (storage / "message" / session / f"{message}.json", info),
            (storage / "part" / message / f"{part}.json", body),
        ):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(obj, indent=2), encoding="utf-8")
