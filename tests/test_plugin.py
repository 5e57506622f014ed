"""The Claude Code plugin shipped in the repository (``.claude-plugin/``, ``hooks/``, ``commands/``).

The hooks run exactly as Claude Code runs them: the command line of ``hooks/hooks.json`` in a shell, with
``CLAUDE_PLUGIN_ROOT`` set, the event's JSON on stdin; checked are the exit code, stdout's shape and the
time taken (Claude Code gives all SessionEnd hooks 1.5 s together). With the Claude Code CLI the
``claude-agent-sdk`` wheel bundles, the folder is validated (``claude plugin validate --strict``),
installed from the repository as a marketplace, and a real headless session (against a local stand-in
for the Messages API) runs the hooks itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fakes.candidates import make
from fakes.waiting import wait_for

from dreamtui.core.config import Config, default_state, load_config
from dreamtui.core.dream.daemon import DreamDaemon
from dreamtui.core.dream.lock import CycleLock
from dreamtui.core.dream.run import SESSION_END, run_cycle
from dreamtui.core.ingest import ended
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger.cycles import CycleRecord
from tests.fakes.cycle_world import ACME, NOW, RULES, WRITTEN, install

REPO = Path(__file__).resolve().parent.parent
HOOK_SCRIPT = REPO / "hooks" / "dreamtui_hook.py"
SESSION_END_BUDGET = 1.5
"""Seconds Claude Code gives every SessionEnd hook together (``CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS``,
1500 by default in the bundled CLI)."""
SESSION = "22222222-2222-4222-8222-222222222222"


def hooks_json() -> dict[str, Any]:
    return json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))


def command_of(event: str) -> str:
    (group,) = hooks_json()["hooks"][event]
    (hook,) = group["hooks"]
    return str(hook["command"])


def run_hook(
    event: str, stdin: bytes | None, env: dict[str, str], close_stdin: bool = True
) -> tuple[int, str, str, float]:
    """The hook's command line run by a shell, as Claude Code runs it: (exit code, stdout, stderr, seconds)."""
    full = {**os.environ, **env, "CLAUDE_PLUGIN_ROOT": str(REPO)}
    started = time.monotonic()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command_of(event)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full,
    )
    assert proc.stdin is not None
    if stdin:
        proc.stdin.write(stdin)
        proc.stdin.flush()
    if close_stdin:
        proc.stdin.close()
    try:
        rc = proc.wait(timeout=30)
    finally:
        if not close_stdin:
            proc.stdin.close()
    elapsed = time.monotonic() - started
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    return rc, out, err, elapsed


def session_end_input(
    transcript: Path, cwd: Path, session: str = SESSION, reason: str = "prompt_input_exit"
) -> bytes:
    """What Claude Code writes on a SessionEnd hook's stdin (the documented fields)."""
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "hook_event_name": "SessionEnd",
            "reason": reason,
        }
    ).encode()


def session_start_input(tmp_path: Path, source: str = "startup") -> bytes:
    return json.dumps(
        {
            "session_id": "99999999-9999-4999-8999-999999999999",
            "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(tmp_path),
            "hook_event_name": "SessionStart",
            "source": source,
        }
    ).encode()


def hook_module() -> Any:
    spec = importlib.util.spec_from_file_location("dreamtui_hook_script", HOOK_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- SessionEnd -------------------------------------------------------------------------------------


def test_session_end_records_the_session_and_says_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"  # missing: the hook makes it
    transcript = tmp_path / "projects" / "-w" / f"{SESSION}.jsonl"
    rc, out, err, seconds = run_hook(
        "SessionEnd", session_end_input(transcript, tmp_path), {"DREAMTUI_STATE": str(state)}
    )
    assert (rc, out, err) == (0, "", "")
    assert seconds < SESSION_END_BUDGET
    record = json.loads((state / "ended" / f"{SESSION}.json").read_text())
    assert record["session_id"] == SESSION and record["transcript_path"] == str(transcript)
    assert record["reason"] == "prompt_input_exit" and record["cwd"] == str(tmp_path)
    assert abs(record["ended_at"] - time.time()) < 60
    assert sorted(p.name for p in (state / "ended").iterdir()) == [f"{SESSION}.json"]  # no temporary left
    (read,) = ended.read_all(Config(state=state, transcripts=tmp_path, memory=tmp_path / "m"))
    assert (read.session, read.transcript, read.reason) == (SESSION, str(transcript), "prompt_input_exit")


@pytest.mark.parametrize(
    "stdin",
    [b"", b"not json", b"[1, 2]", b'{"session_id": 7}', b"\xff\xfe\x00garbage", b'{"session_id": "x"' * 1000],
    ids=["empty", "not-json", "a-list", "no-strings", "binary", "truncated"],
)
def test_session_end_on_malformed_input_exits_0_and_records_nothing(tmp_path: Path, stdin: bytes) -> None:
    state = tmp_path / "state"
    rc, out, err, seconds = run_hook("SessionEnd", stdin, {"DREAMTUI_STATE": str(state)})
    assert (rc, out, err) == (0, "", "")
    assert seconds < SESSION_END_BUDGET
    assert not (state / "ended").exists() or list((state / "ended").iterdir()) == []


def test_session_end_does_not_wait_for_a_stdin_that_never_closes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    rc, out, err, seconds = run_hook(
        "SessionEnd",
        session_end_input(tmp_path / "t.jsonl", tmp_path),
        {"DREAMTUI_STATE": str(state)},
        close_stdin=False,
    )
    assert (rc, out, err) == (0, "", "")
    assert seconds < SESSION_END_BUDGET
    assert (state / "ended" / f"{SESSION}.json").exists()  # what came is still recorded


def test_session_end_with_the_state_folder_locked_or_unusable(tmp_path: Path, config: Config) -> None:
    ledger = Ledger.open(config.state)
    conn = sqlite3.connect(config.ledger_path, timeout=0)
    try:
        with CycleLock(config.lock_path):  # a dream cycle runs, and the ledger is being written
            conn.execute("BEGIN EXCLUSIVE")
            rc, out, err, seconds = run_hook(
                "SessionEnd",
                session_end_input(tmp_path / "t.jsonl", tmp_path),
                {"DREAMTUI_STATE": str(config.state)},
            )
            assert (rc, out, err) == (0, "", "") and seconds < SESSION_END_BUDGET
            assert (config.state / "ended" / f"{SESSION}.json").exists()
            rc, out, err, seconds = run_hook(
                "SessionStart", session_start_input(tmp_path), {"DREAMTUI_STATE": str(config.state)}
            )
            assert (rc, err) == (0, "") and seconds < SESSION_END_BUDGET
    finally:
        conn.rollback()
        conn.close()
        ledger.close()
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("x")
    for state in (not_a_folder, not_a_folder / "below"):  # a file where the folder should be
        rc, out, err, seconds = run_hook(
            "SessionEnd", session_end_input(tmp_path / "t.jsonl", tmp_path), {"DREAMTUI_STATE": str(state)}
        )
        assert (rc, out, err) == (0, "", "") and seconds < SESSION_END_BUDGET
        rc, out, err, _ = run_hook(
            "SessionStart", session_start_input(tmp_path), {"DREAMTUI_STATE": str(state)}
        )
        assert (rc, out, err) == (0, "", "")


def test_the_hook_writes_where_dreamtui_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The script never imports dreamtui, so its idea of the state folder is checked against dreamtui's."""
    hook = hook_module()
    assert Path(hook.state_folder()) == default_state()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert Path(hook.state_folder()) == default_state()
    monkeypatch.delenv("XDG_STATE_HOME")
    assert Path(hook.state_folder()) == default_state()
    monkeypatch.setenv("DREAMTUI_STATE", str(tmp_path / "mine"))
    assert Path(hook.state_folder()) == load_config(None).state == tmp_path / "mine"
    monkeypatch.delenv("DREAMTUI_STATE")
    # a --state elsewhere still reads the default folder the hook wrote to
    cfg = Config(state=tmp_path / "other", transcripts=tmp_path, memory=tmp_path / "m")
    assert default_state() / "ended" in ended.folders(cfg)


def test_the_hook_imports_nothing_of_dreamtui(tmp_path: Path) -> None:
    probe = (
        "import runpy, sys; sys.argv = ['h', 'session-end']; "
        f"runpy.run_path({str(HOOK_SCRIPT)!r}, run_name='not_main'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('dreamtui', 'pydantic', 'click', 'textual', 'sqlite3', 'platformdirs')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- SessionStart -----------------------------------------------------------------------------------


def test_session_start_shows_one_line_and_no_proposal_text(tmp_path: Path, config: Config) -> None:
    env = {"DREAMTUI_STATE": str(config.state)}
    rc, out, err, _ = run_hook("SessionStart", session_start_input(tmp_path), env)  # no ledger yet
    assert (rc, out, err) == (0, "", "")
    ledger = Ledger.open(config.state)
    try:
        rc, out, err, _ = run_hook("SessionStart", session_start_input(tmp_path), env)  # nothing waits
        assert (rc, out, err) == (0, "", "")
        claims = [make(ledger, n, claim=f"Always run the migrations twice {n}").claim for n in range(3)]
        make(ledger, 9, claim="An accepted one", status="accepted")
    finally:
        ledger.close()
    for source in ("startup", "resume"):
        rc, out, err, seconds = run_hook("SessionStart", session_start_input(tmp_path, source), env)
        assert (rc, err) == (0, "") and seconds < 5  # hooks.json's timeout
        assert out.count("\n") == 1
        answer = json.loads(out)
        assert set(answer) == {"systemMessage", "suppressOutput"}  # shown to the person, not the agent
        assert "\n" not in answer["systemMessage"]
        assert answer["systemMessage"].startswith("dreamtui: 3 proposals wait for your review")
        assert not any(claim in out for claim in claims)


def test_a_damaged_ledger_shows_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "ledger.sqlite3").write_bytes(b"not a database" * 100)
    rc, out, err, _ = run_hook("SessionStart", session_start_input(tmp_path), {"DREAMTUI_STATE": str(state)})
    assert (rc, out, err) == (0, "", "")


# -- what dreamtui does with the record -------------------------------------------------------------


@pytest.fixture
def acme(config: Config, monkeypatch: pytest.MonkeyPatch) -> Config:
    """The busy fixture day, its sessions last written 100 s ago: inside the quiet period."""
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    install(config, "busy")
    recent = WRITTEN + 3500
    for p in config.transcripts.rglob("*.jsonl"):
        os.utime(p, (recent, recent))
    return config.changed(extractor="command", command=(sys.executable, str(RULES)))


def end_session(config: Config, tmp_path: Path) -> Path:
    """Run the SessionEnd hook for the busy day's first session, as Claude Code would; its record."""
    transcript = config.transcripts / ACME / f"{SESSION}.jsonl"
    when = transcript.stat().st_mtime + 1  # the session ended just after its last line
    rc, _, _, _ = run_hook(
        "SessionEnd", session_end_input(transcript, tmp_path), {"DREAMTUI_STATE": str(config.state)}
    )
    assert rc == 0
    record = config.state / "ended" / f"{SESSION}.json"
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "ended_at": when}))
    return record


def test_an_ended_session_is_dreamed_at_once_and_its_record_removed(acme: Config, tmp_path: Path) -> None:
    record = end_session(acme, tmp_path)
    with Ledger.open(acme.state) as ledger:
        cycle = run_cycle(acme, ledger, project=ACME)
    # the ended session is dreamed though it was written 100 s ago; the other one still waits
    assert cycle.depth == "deep"
    assert cycle.stats.sessions_deferred == 1 and cycle.stats.sessions_digested == 1
    assert not record.exists()


def test_a_session_resumed_after_its_end_waits_again(acme: Config, tmp_path: Path) -> None:
    record = end_session(acme, tmp_path)
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "ended_at": data["ended_at"] - 3600}))  # written since its end
    with Ledger.open(acme.state) as ledger:
        cycle = run_cycle(acme, ledger, project=ACME)
    assert cycle.stats.sessions_deferred == 2
    assert record.exists()


def test_dream_takes_the_folder_a_session_ran_in(acme: Config, tmp_path: Path) -> None:
    """``/dreamtui:dream`` runs ``dreamtui dream --project .``: the folder the sessions ran in (``.`` is
    made the working folder's absolute path) names their project."""
    end_session(acme, tmp_path)
    with Ledger.open(acme.state) as ledger:
        cycle = run_cycle(acme, ledger, project="/home/kim/acme")
    assert cycle.chat_id == ACME and cycle.stats.sessions_digested == 1


def test_watch_dreams_the_project_of_an_ended_session(acme: Config, tmp_path: Path) -> None:
    woke: list[CycleRecord] = []
    said: list[str] = []
    with Ledger.open(acme.state) as ledger:
        daemon = DreamDaemon(
            acme, ledger, poll=True, schedule=None, debounce=0.1, say=said.append, on_wake=woke.append
        )
        daemon.start()
        thread = threading.Thread(target=daemon.run, daemon=True)
        thread.start()
        try:
            record = end_session(acme, tmp_path)
            assert wait_for(lambda: bool(woke), 30), said
            assert wait_for(lambda: not record.exists(), 10)
        finally:
            daemon.stop()
            thread.join(10)
            daemon.close()
    (cycle,) = woke
    assert (cycle.trigger, cycle.chat_id, cycle.status) == (SESSION_END, ACME, "completed")
    assert cycle.stats.sessions_digested == 1 and cycle.stats.kept > 0
    assert any(f"a session ended in {ACME}: dreaming" in line for line in said)


# -- the plugin folder ------------------------------------------------------------------------------

KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
EVENTS = {
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
}


def test_the_plugin_folder_is_what_claude_code_loads() -> None:
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert KEBAB.match(plugin["name"]) and re.match(r"^\d+\.\d+\.\d+$", plugin["version"])
    assert plugin["description"] and isinstance(plugin["author"], dict) and plugin["author"]["name"]
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert plugin["version"] == project["version"]  # one version for the package and the plugin
    assert KEBAB.match(market["name"]) and market["owner"]["name"]
    (entry,) = market["plugins"]
    assert entry["name"] == plugin["name"]
    assert (REPO / entry["source"] / ".claude-plugin" / "plugin.json").is_file()
    # the standard layout: hooks/hooks.json and commands/*.md, not declared again in the manifest
    assert not {"hooks", "commands"} & set(plugin)
    table = hooks_json()["hooks"]
    assert set(table) == {"SessionEnd", "SessionStart"} and set(table) <= EVENTS
    for event, groups in table.items():
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            for hook in group["hooks"]:
                assert hook["type"] == "command" and 0 < hook["timeout"] <= 10
                for used in re.findall(r"\$\{CLAUDE_PLUGIN_ROOT\}/([^\"' ]+)", hook["command"]):
                    assert (REPO / used).is_file(), f"{event} runs a missing file {used}"
    commands = sorted((REPO / "commands").glob("*.md"))
    assert [c.stem for c in commands] == ["dream", "review"]
    for command in commands:
        text = command.read_text(encoding="utf-8")
        front = text.split("---\n")[1]
        assert re.search(r"^description: \S", front, re.M), command
        allowed = re.search(r"^allowed-tools: (.+)$", front, re.M)
        assert allowed and "dreamtui" in allowed.group(1)  # the ! line may run only dreamtui
        for line in re.findall(r"^!`([^`]*)`", text, re.M):
            assert line.startswith("dreamtui ")


# -- with the Claude Code CLI -----------------------------------------------------------------------


def bundled_claude() -> Path:
    try:
        import claude_agent_sdk
    except ImportError:
        pytest.skip("claude-agent-sdk is not installed")
    cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not cli.is_file():
        pytest.skip(f"the claude-agent-sdk wheel for this platform bundles no Claude Code CLI ({cli})")
    return cli


def claude_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(home), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1")
    env["XDG_STATE_HOME"] = str(home / ".local" / "state")
    return env


def test_claude_plugin_validate_passes_strict(tmp_path: Path) -> None:
    cli = bundled_claude()
    for target in (REPO, REPO / ".claude-plugin" / "plugin.json"):
        done = subprocess.run(
            [str(cli), "plugin", "validate", "--strict", "--json", str(target)],
            capture_output=True,
            text=True,
            env=claude_env(tmp_path),
            timeout=120,
        )
        report = json.loads(done.stdout)
        assert done.returncode == 0 and report["success"], done.stdout + done.stderr
        assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
        events = {h["event"] for h in report["provides"]["hooks"]}
        assert events == {"SessionEnd", "SessionStart"}
        assert sorted(report["provides"]["commands"]) == ["dreamtui:dream", "dreamtui:review"]


def test_installed_from_the_repository_as_a_marketplace(tmp_path: Path) -> None:
    cli = bundled_claude()
    env = claude_env(tmp_path)
    for args in (["marketplace", "add", str(REPO)], ["install", "dreamtui@dreamtui"]):
        done = subprocess.run(
            [str(cli), "plugin", *args], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run(
        [str(cli), "plugin", "list"], capture_output=True, text=True, env=env, timeout=120
    )
    assert "dreamtui@dreamtui" in listed.stdout and "enabled" in listed.stdout


def test_a_real_claude_code_session_runs_both_hooks(tmp_path: Path) -> None:
    """A headless Claude Code session with the plugin (``--plugin-dir``), its model a local stand-in: the
    SessionStart line reaches the hook output, never a model request; the ended session is recorded."""
    from fakes.messages_stream import MessagesStream

    cli = bundled_claude()
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    env = claude_env(home)
    state = home / ".local" / "state" / "dreamtui"
    with Ledger.open(state) as ledger:
        claims = [make(ledger, n, claim=f"Never deploy on a Friday {n}").claim for n in range(2)]
    with MessagesStream() as api:
        env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-ant-test-stand-in")
        done = subprocess.run(
            [
                str(cli),
                "-p",
                "hello",
                "--plugin-dir",
                str(REPO),
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=work,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    (started,) = [
        m for m in lines if m.get("subtype") == "hook_response" and m.get("hook_event") == "SessionStart"
    ]
    assert started["exit_code"] == 0 and started["outcome"] == "success"
    assert json.loads(started["stdout"])["systemMessage"].startswith("dreamtui: 2 proposals wait")
    sent = json.dumps(api.bodies)
    assert api.bodies and "2 proposals wait" not in sent and not any(c in sent for c in claims)
    session = next(m["session_id"] for m in lines if m.get("session_id"))
    record = json.loads((state / "ended" / f"{session}.json").read_text())
    assert record["hook_event_name"] == "SessionEnd" and record["cwd"] == str(work.resolve())
    assert Path(record["transcript_path"]).is_file()  # the session's own transcript, as dreamtui reads it
    assert shutil.which("python3")  # the hook's command runs python3


def test_the_slash_commands_in_a_real_session(tmp_path: Path) -> None:
    """``/dreamtui:dream`` and ``/dreamtui:review`` in headless Claude Code sessions: their ``!`` lines run
    this dreamtui (allowed by the commands' ``allowed-tools``) and what the model gets is the waking
    message and the counts of ``dreamtui status``, never a proposal's text."""
    from fakes.messages_stream import MessagesStream

    cli = bundled_claude()
    home, work, bin_dir = tmp_path / "home", tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    shim = bin_dir / "dreamtui"  # this checkout's dreamtui, as `dreamtui` on PATH
    shim.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c "from dreamtui.cli.main import main; main()" "$@"\n'
    )
    shim.chmod(0o755)
    env = claude_env(home)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        PYTHONPATH=str(REPO),
        DREAMTUI_EXTRACTOR="heuristic",
        GIT_AUTHOR_NAME="Kim",
        GIT_AUTHOR_EMAIL="kim@example.com",
        GIT_COMMITTER_NAME="Kim",
        GIT_COMMITTER_EMAIL="kim@example.com",
    )
    with Ledger.open(home / ".local" / "state" / "dreamtui") as ledger:
        claims = [make(ledger, n, claim=f"Keep the release notes short {n}").claim for n in range(3)]

    def session(prompt: str, api: MessagesStream) -> str:
        before = len(api.bodies)
        done = subprocess.run(
            [str(cli), "-p", prompt, "--plugin-dir", str(REPO), "--output-format", "json"],
            capture_output=True,
            text=True,
            env={**env, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test-stand-in"},
            cwd=work,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return json.dumps(api.bodies[before:])

    with MessagesStream() as api:
        session("Please keep the changelog entries to one line each from now on.", api)
        dreamt = session("/dreamtui:dream", api)
        reviewed = session("/dreamtui:review", api)
    project = re.sub(r"[^A-Za-z0-9]", "-", str(work.resolve()))
    assert f"Dream cycle #1 for {project}" in dreamt, dreamt[-3000:]
    assert "waiting for review: 3 proposals" in reviewed, reviewed[-3000:]
    assert "watch: not running" in reviewed
    assert not any(claim in dreamt + reviewed for claim in claims)


def test_an_ended_claude_code_session_is_dreamed_by_the_running_watch(tmp_path: Path) -> None:
    """The issue's "done when": with the plugin installed and ``dreamtui watch`` running, a person ends a
    Claude Code session, and its proposal waits in the next ``dreamtui`` — no dream started by hand. The
    session ended a moment ago, yet it is not deferred as still being written."""
    from fakes.messages_stream import MessagesStream

    from tests.test_dream_cli import MAIN, StderrLines

    cli = bundled_claude()
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude" / "projects").mkdir(parents=True)
    work.mkdir()
    env = claude_env(home)
    env.update(
        XDG_CONFIG_HOME=str(home / ".config"),
        DREAMTUI_EXTRACTOR="heuristic",
        GIT_AUTHOR_NAME="Kim",
        GIT_AUTHOR_EMAIL="kim@example.com",
        GIT_COMMITTER_NAME="Kim",
        GIT_COMMITTER_EMAIL="kim@example.com",
    )
    env.pop("DREAMTUI_CONFIG", None)
    watch_env = {**env, "PYTHONPATH": str(REPO)}
    lesson = "always run the database migrations with --dry-run first and never run them against production"
    watch = subprocess.Popen(
        [sys.executable, "-c", MAIN, "watch", "--debounce", "0.2"],
        env=watch_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = StderrLines(watch)
        lines.wait_for("watching", timeout=120)
        with MessagesStream() as api:
            done = subprocess.run(
                [
                    str(cli),
                    "-p",
                    f"From now on, {lesson}; we lost a table last month.",
                    "--plugin-dir",
                    str(REPO),
                ],
                capture_output=True,
                text=True,
                env={**env, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test-stand-in"},
                cwd=work,
                timeout=300,
            )
        assert done.returncode == 0, done.stderr
        lines.wait_for("a session ended in", timeout=120)
        state = home / ".local" / "state" / "dreamtui"
        assert wait_for(lambda: not list((state / "ended").glob("*.json")), 120)  # dreamed: record removed
        watch.send_signal(signal.SIGTERM)
        lines.wait_for("stopped watching", timeout=60)
        watch.wait(timeout=60)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    listed = subprocess.run(
        [sys.executable, "-c", MAIN, "candidates", "--json"],
        env=watch_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    pending = json.loads(listed.stdout)
    assert any(lesson[:40].lower() in json.dumps(c).lower() for c in pending), pending
    with Ledger.open(home / ".local" / "state" / "dreamtui") as ledger:
        (row,) = ledger.query("SELECT trigger, status FROM dream_cycles")
    assert (row["trigger"], row["status"]) == (SESSION_END, "completed")
