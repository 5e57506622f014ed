"""``dreamtui watch --install/--uninstall`` (a systemd user unit, a launchd agent) and ``dreamtui status``.

A HOME of the test's own; ``systemctl`` is a stand-in on PATH that records what it was asked (the real one
needs a user session bus), so a test sees exactly which commands ran, and that none ran before a yes.
"""

from __future__ import annotations

import json
import os
import plistlib
import shlex
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.candidates import make

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.services import watching
from tests.test_dream_cli import MAIN, StderrLines, env_for
from tests.test_dream_cli import home as home  # noqa: F401  (the fixture)

UNIT = Path(".config") / "systemd" / "user" / "dreamtui-watch.service"


@pytest.fixture
def systemctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``systemctl`` first on PATH that appends its arguments to a log and succeeds."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "systemctl.log"
    script = bin_dir / "systemctl"
    script.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def ran(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def invoke(*args: str, answer: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=answer, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watching.sys, "platform", "linux")


def test_install_shows_the_unit_and_does_nothing_without_a_yes(linux: None, systemctl: Path) -> None:
    unit = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / "dreamtui-watch.service"
    code, out = invoke("watch", "--install", answer="n\n")
    assert code == 0
    assert f"this writes {unit}" in out and "ExecStart=" in out
    assert "systemctl --user enable --now dreamtui-watch.service" in out
    assert "nothing was written or run" in out
    assert not unit.exists() and ran(systemctl) == []
    code, out = invoke("watch", "--install", answer="")  # no answer at all (a script): no
    assert not unit.exists() and ran(systemctl) == []


def test_install_writes_the_unit_that_runs_this_dreamtui(linux: None, systemctl: Path) -> None:
    unit = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / "dreamtui-watch.service"
    code, out = invoke("watch", "--install", answer="y\n")
    assert code == 0, out
    text = unit.read_text()
    (exec_line,) = [line for line in text.splitlines() if line.startswith("ExecStart=")]
    argv = shlex.split(exec_line.removeprefix("ExecStart="))
    assert argv == [sys.executable, "-m", "dreamtui", "--config", os.environ["DREAMTUI_CONFIG"], "watch"]
    assert "[Install]\nWantedBy=default.target" in text and "Restart=on-failure" in text
    assert ran(systemctl) == ["--user daemon-reload", "--user enable --now dreamtui-watch.service"]
    # the command the unit runs is this dreamtui
    version = subprocess.run([*argv[:3], "--version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("dreamtui, version")


def test_uninstall_removes_exactly_the_unit(linux: None, systemctl: Path) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user"
    code, out = invoke("watch", "--uninstall", "--yes")
    assert code == 0 and "no watch service is installed" in out and ran(systemctl) == []
    assert invoke("watch", "--install", "--yes")[0] == 0
    (folder / "other.service").write_text("[Service]\nExecStart=/bin/true\n")
    code, out = invoke("watch", "--uninstall", answer="n\n")
    assert (folder / "dreamtui-watch.service").exists()
    code, out = invoke("watch", "--uninstall", "--yes")
    assert code == 0, out
    assert sorted(p.name for p in folder.iterdir()) == ["other.service"]
    assert ran(systemctl)[-2:] == ["--user disable --now dreamtui-watch.service", "--user daemon-reload"]


def test_a_failing_systemctl_says_so_in_one_line(
    linux: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text(
        "#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n"
    )
    (bin_dir / "systemctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = CliRunner().invoke(cli, ["watch", "--install", "--yes"])
    assert result.exit_code == 2
    assert "`systemctl --user daemon-reload` failed (exit 1): Failed to connect to bus" in result.output
    assert "--uninstall" in result.output


def test_folders_are_passed_and_quoted(tmp_path: Path) -> None:
    odd = tmp_path / "my transcripts 100%"
    cfg = Config(transcripts=odd, memory=tmp_path / "mem", state=tmp_path / "st")
    unit = watching.service_unit(cfg, platform="linux", home=tmp_path)
    assert unit.argv == (
        sys.executable, "-m", "dreamtui", "--transcripts", str(odd), "--memory", str(tmp_path / "mem"),
        "--state", str(tmp_path / "st"), "watch",
    )  # fmt: skip
    (line,) = [x for x in unit.text.splitlines() if x.startswith("ExecStart=")]
    assert f'"{odd}"'.replace("%", "%%") in line  # systemd: quoted, % doubled


def test_the_launchd_agent(tmp_path: Path) -> None:
    cfg = Config(transcripts=tmp_path / "t", memory=tmp_path / "m", state=tmp_path / "s")
    unit = watching.service_unit(cfg, platform="darwin", home=tmp_path, uid=501)
    assert unit.path == tmp_path / "Library" / "LaunchAgents" / "io.github.dreamtui.watch.plist"
    plist = plistlib.loads(unit.text.encode())
    assert plist["Label"] == "io.github.dreamtui.watch" and plist["RunAtLoad"] is True
    assert plist["ProgramArguments"][:3] == [sys.executable, "-m", "dreamtui"]
    assert plist["ProgramArguments"][-1] == "watch"
    assert unit.start == (("launchctl", "bootstrap", "gui/501", str(unit.path)),)
    assert unit.stop == (("launchctl", "bootout", "gui/501", str(unit.path)),)
    calls: list[tuple[str, ...]] = []
    watching.install(unit, run=lambda argv: (calls.append(argv), (0, ""))[1])
    assert unit.path.read_text() == unit.text and calls == list(unit.start)
    watching.uninstall(unit, run=lambda argv: (calls.append(argv), (0, ""))[1])
    assert not unit.path.exists() and calls[-1] == unit.stop[0]
    assert list(unit.path.parent.iterdir()) == []


def test_another_platform_is_a_clear_error(tmp_path: Path) -> None:
    cfg = Config(transcripts=tmp_path, memory=tmp_path / "m", state=tmp_path / "s")
    with pytest.raises(Exception, match="knows systemd .Linux. and launchd .macOS., not win32"):
        watching.service_unit(cfg, platform="win32")


# -- status -----------------------------------------------------------------------------------------


def status(home: Path) -> dict[str, object]:  # noqa: F811
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "status", "--json"],
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_status_says_whether_watch_runs_and_what_waits(home: Path) -> None:  # noqa: F811
    st = status(home)
    assert st["watch"] == {"running": False, "pid": None, "since": None, "service": None}
    assert st["last_dream"] is None
    assert st["waiting"] == {
        "proposals": 0,
        "briefing": False,
        "ended_sessions": 0,
        "projects_with_new_content": [],
    }
    with Ledger.open(home / "state") as ledger:
        for n in range(2):
            make(ledger, n)
    ended = home / "state" / "ended"
    ended.mkdir(parents=True)
    (ended / "s1.json").write_text(
        json.dumps({"session_id": "s1", "transcript_path": "/x/s1.jsonl", "ended_at": 1.0e9})
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "watch", "--debounce", "0.2"],
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = StderrLines(proc)
        lines.wait_for("watching", timeout=120)
        st = status(home)
        assert st["watch"]["running"] is True and st["watch"]["pid"] == proc.pid  # type: ignore[index]
        assert st["waiting"]["proposals"] == 2 and st["waiting"]["ended_sessions"] == 1  # type: ignore[index]
        second = subprocess.run(
            [sys.executable, "-c", MAIN, "watch"],
            env=env_for(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 3
        assert f"another `dreamtui watch` is running (pid {proc.pid}" in second.stderr
        proc.send_signal(signal.SIGTERM)
        lines.wait_for("stopped watching", timeout=60)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert status(home)["watch"]["running"] is False  # type: ignore[index]
    text = subprocess.run(
        [sys.executable, "-c", MAIN, "status"], env=env_for(home), capture_output=True, text=True, timeout=120
    ).stdout
    assert text.splitlines()[0].startswith("watch: not running")
    assert "waiting for review: 2 proposals (review: `dreamtui`)" in text
    assert "not dreamed yet: 1 ended session; new content in 0 projects" in text
