#!/usr/bin/env python3
"""dreamtui's Claude Code hooks: ``session-end`` and ``session-start`` (see hooks/hooks.json).

A plain script on purpose: it imports only the standard library (never the dreamtui package, which
takes a second to import), so Claude Code is never delayed. It runs on any Python 3 a person has.

- ``session-end`` (the SessionEnd hook) only records "this session ended": one small JSON file in
  dreamtui's state folder, ``ended/<session id>.json``. No model call, no digest, no ledger, no lock.
  ``dreamtui watch`` (and the next ``dreamtui dream``) read these records: the ended session is dreamed
  at once instead of waiting until it has been quiet for ``quiet_minutes``, and watch dreams its project.
- ``session-start`` (the SessionStart hook) shows the person at most one line, how many proposals wait
  for review, as ``systemMessage`` (shown to the person, never added to the agent's context). It never
  prints a proposal's text.

Both always exit 0, print nothing on stderr and give up after a bounded time: a missing, locked,
unwritable or damaged state folder, or malformed input, only means nothing is recorded or shown.
The state folder is the one dreamtui uses by default (``DREAMTUI_STATE`` when set, else the user state
directory: ``$XDG_STATE_HOME/dreamtui`` or ``~/.local/state/dreamtui``; on macOS
``~/Library/Application Support/dreamtui``; on Windows ``%LOCALAPPDATA%\\dreamtui\\dreamtui``).
"""

import json
import os
import sys
import time

STDIN_SECONDS = 0.5
"""How long the hook waits for its input at most (Claude Code writes it at once; a pipe it never closes
must not hold the hook; Claude Code gives every SessionEnd hook 1.5 s in all)."""
STDIN_LIMIT = 1 << 20
ENDED = "ended"
RECORD_FIELDS = ("session_id", "transcript_path", "cwd", "hook_event_name", "reason")


def state_folder():
    """dreamtui's default state folder (what ``dreamtui.core.config.default_state`` names, or
    ``DREAMTUI_STATE``)."""
    given = os.environ.get("DREAMTUI_STATE", "").strip()
    if given:
        return os.path.expanduser(given)
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), "dreamtui")
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "dreamtui", "dreamtui")
    xdg = os.environ.get("XDG_STATE_HOME", "").strip()
    base = xdg if xdg and os.path.isabs(xdg) else os.path.expanduser("~/.local/state")
    return os.path.join(base, "dreamtui")


def read_input(seconds=STDIN_SECONDS):
    """The hook's stdin JSON object ({} when it is missing, malformed or too slow to come)."""
    data = b""
    try:
        fd = sys.stdin.fileno()
        deadline = time.monotonic() + seconds
        try:
            import select
        except ImportError:  # pragma: no cover - every platform Claude Code runs on has select
            select = None
        while len(data) < STDIN_LIMIT:
            if select is not None and os.name != "nt":
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    except (OSError, ValueError, AttributeError):
        pass
    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _safe_name(session_id):
    kept = "".join(c for c in session_id if c.isascii() and (c.isalnum() or c in "-_."))[:120].strip(".")
    return kept or f"session-{int(time.time() * 1000)}-{os.getpid()}"


def session_end(event, folder=None):
    """Write ``ended/<session>.json`` (atomically: a temporary file renamed into place)."""
    record = {k: event[k] for k in RECORD_FIELDS if isinstance(event.get(k), str)}
    if not record.get("session_id") and not record.get("transcript_path"):
        return None  # nothing to say which session ended
    record["ended_at"] = time.time()
    folder = os.path.join(folder or state_folder(), ENDED)
    os.makedirs(folder, exist_ok=True)
    name = _safe_name(record.get("session_id") or os.path.basename(record.get("transcript_path", "")))
    path = os.path.join(folder, name + ".json")
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as fh:
        json.dump(record, fh, ensure_ascii=False)
    os.replace(temporary, path)
    return path


def pending_count(folder=None):
    """How many proposals wait for review in dreamtui's ledger (None when it cannot be read now)."""
    path = os.path.join(folder or state_folder(), "ledger.sqlite3")
    if not os.path.isfile(path):
        return None
    import sqlite3

    conn = sqlite3.connect(
        "file:{}?mode=ro".format(path.replace("?", "%3f").replace("#", "%23")), uri=True, timeout=0.2
    )
    try:
        row = conn.execute("SELECT COUNT(*) FROM candidates WHERE status = 'pending'").fetchone()
    finally:
        conn.close()
    return int(row[0]) if row else None


def session_start(event, folder=None):
    """The hook's JSON output: one line for the person when proposals wait, else nothing."""
    count = pending_count(folder)
    if not count:
        return None
    noun = "proposal waits" if count == 1 else "proposals wait"
    line = f"dreamtui: {count} {noun} for your review (run `dreamtui` in a terminal, or /dreamtui:review)"
    return {"systemMessage": line, "suppressOutput": True}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        event = read_input()
        if argv[:1] == ["session-end"]:
            session_end(event)
        elif argv[:1] == ["session-start"]:
            output = session_start(event)
            if output:
                sys.stdout.write(json.dumps(output) + "\n")
                sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a hook never fails Claude Code, whatever happened
        pass
    return 0


if __name__ == "__main__":
    try:
        main()
    finally:
        os._exit(0)  # exit 0 at once, without waiting for anything (flushed above)
