"""``dreamtui watch`` as a service of the person's session, and what ``dreamtui status`` says.

:func:`service_unit` builds the file that runs ``dreamtui watch`` at login: a systemd user unit on Linux
(``~/.config/systemd/user/dreamtui-watch.service``), a launchd agent on macOS
(``~/Library/LaunchAgents/io.github.dreamtui.watch.plist``), with the commands that start and stop it.
The front end prints it and asks before :func:`install` writes it and runs those commands;
:func:`uninstall` stops it and removes exactly that file.

:func:`watch_status` reads what a person asks first: does watch run (the lock a running watch holds,
``watch.lock`` in the state folder: its pid and start time), when did dreamtui last dream, and what
waits (proposals, ended sessions not dreamed yet, projects with new content).
"""

from __future__ import annotations

import os
import plistlib
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dreamtui.core import config as core_config
from dreamtui.core.config import Config
from dreamtui.core.dream.lock import holder
from dreamtui.core.dream.sessions import projects_with_new_content
from dreamtui.core.errors import ConfigError
from dreamtui.core.ingest import ended
from dreamtui.core.ledger import cycles
from dreamtui.core.ledger.cycles import CycleRecord
from dreamtui.services.workspace import Workspace

SYSTEMD_NAME = "dreamtui-watch.service"
LAUNCHD_LABEL = "io.github.dreamtui.watch"


@dataclass(frozen=True, slots=True)
class ServiceUnit:
    """The file that runs ``dreamtui watch`` as a service, and the commands around it."""

    kind: str
    """``systemd`` or ``launchd``."""
    path: Path
    text: str
    argv: tuple[str, ...]
    """What the service runs."""
    start: tuple[tuple[str, ...], ...]
    """Run after the file is written: load it, start it now and at every login."""
    stop: tuple[tuple[str, ...], ...]
    """Run before the file is removed: stop it, and no longer start it at login."""
    reload: tuple[tuple[str, ...], ...] = ()
    """Run after the file is removed."""


def watch_argv(config: Config, executable: str | None = None) -> tuple[str, ...]:
    """``python -m dreamtui [folders] watch``: this interpreter (the one dreamtui is installed in, be it
    a ``uv tool`` or ``pipx`` venv), and the folders when they are not the defaults."""
    argv = [executable or sys.executable, "-m", "dreamtui"]
    transcripts, memory = Path(config.transcripts), Path(config.memory)
    if transcripts != core_config.default_transcripts():
        argv += ["--transcripts", str(transcripts)]
    if memory != core_config.default_memory():
        argv += ["--memory", str(memory)]
    if Path(config.state) != core_config.folders_state(transcripts, memory):
        argv += ["--state", str(config.state)]
    if config.config_file is not None and Path(config.config_file) != core_config.default_config_file():
        argv += ["--config", str(config.config_file)]
    return (*argv, "watch")


def _systemd_word(word: str) -> str:
    """One ``ExecStart`` word: quoted when it holds a space or a quote, ``%`` and ``\\`` escaped."""
    word = word.replace("%", "%%")
    if re.search(r"[\s\"'\\;$]", word) or not word:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word


def service_unit(
    config: Config,
    *,
    platform: str | None = None,
    executable: str | None = None,
    home: Path | None = None,
    uid: int | None = None,
) -> ServiceUnit:
    """The service file for this platform (``sys.platform`` unless given): a ConfigError elsewhere."""
    platform = platform or sys.platform
    home = home or Path.home()
    argv = watch_argv(config, executable)
    path_env = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    log = Path(config.state) / "watch.log"
    if platform.startswith("linux"):
        base = os.environ.get("XDG_CONFIG_HOME", "").strip()
        folder = (Path(base) if base and os.path.isabs(base) else home / ".config") / "systemd" / "user"
        text = "\n".join(
            [
                "# Written by `dreamtui watch --install`; `dreamtui watch --uninstall` removes it.",
                "[Unit]",
                "Description=dreamtui watch: dream Claude Code sessions as they end, and daily",
                "",
                "[Service]",
                "Type=simple",
                f"ExecStart={' '.join(_systemd_word(w) for w in argv)}",
                f"Environment={_systemd_word('PATH=' + path_env)}",
                "Restart=on-failure",
                "RestartSec=30",
                "",
                "[Install]",
                "WantedBy=default.target",
                "",
            ]
        )
        user = ("systemctl", "--user")
        return ServiceUnit(
            "systemd",
            folder / SYSTEMD_NAME,
            text,
            argv,
            start=((*user, "daemon-reload"), (*user, "enable", "--now", SYSTEMD_NAME)),
            stop=((*user, "disable", "--now", SYSTEMD_NAME),),
            reload=((*user, "daemon-reload"),),
        )
    if platform == "darwin":
        path = home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        plist = {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": list(argv),
            "EnvironmentVariables": {"PATH": path_env},
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "StandardOutPath": str(log),
            "StandardErrorPath": str(log),
        }
        domain = f"gui/{os.getuid() if uid is None else uid}"
        return ServiceUnit(
            "launchd",
            path,
            plistlib.dumps(plist).decode("utf-8"),
            argv,
            start=(("launchctl", "bootstrap", domain, str(path)),),
            stop=(("launchctl", "bootout", domain, str(path)),),
        )
    raise ConfigError(
        f"`dreamtui watch --install` knows systemd (Linux) and launchd (macOS), not {platform}: "
        "run `dreamtui watch` from your system's own start-up tool"
    )


Runner = Callable[[tuple[str, ...]], tuple[int, str]]


def run_command(argv: tuple[str, ...]) -> tuple[int, str]:
    """Run one service command: (exit code, its output); a missing program is exit 127."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, f"{' '.join(argv)}: no answer in 60 s"
    return done.returncode, (done.stdout + done.stderr).strip()


def install(unit: ServiceUnit, run: Runner = run_command) -> list[str]:
    """Write the service file and run its start commands; lines saying what happened. Raises
    ConfigError naming the command that failed (the file stays: ``--uninstall`` removes it)."""
    unit.path.parent.mkdir(parents=True, exist_ok=True)
    temporary = unit.path.with_name(unit.path.name + ".tmp")
    temporary.write_text(unit.text, encoding="utf-8")
    os.replace(temporary, unit.path)
    said = [f"wrote {unit.path}"]
    for argv in unit.start:
        code, out = run(argv)
        if code != 0:
            raise ConfigError(
                f"`{' '.join(argv)}` failed (exit {code}){': ' + out.splitlines()[-1] if out else ''}; "
                f"{unit.path} is written: run it yourself, or `dreamtui watch --uninstall`"
            )
        said.append(f"ran {' '.join(argv)}")
    return said


def uninstall(unit: ServiceUnit, run: Runner = run_command) -> list[str]:
    """Stop the service and remove its file (only that file); lines saying what happened."""
    said: list[str] = []
    for argv in unit.stop:
        code, out = run(argv)
        said.append(
            f"ran {' '.join(argv)}" + (f" (exit {code}: {out.splitlines()[-1]})" if code and out else "")
        )
    unit.path.unlink(missing_ok=True)
    said.append(f"removed {unit.path}")
    for argv in unit.reload:
        run(argv)
        said.append(f"ran {' '.join(argv)}")
    return said


@dataclass(slots=True)
class WatchStatus:
    """What ``dreamtui status`` says."""

    running: bool
    pid: int | None
    since: str | None
    service: str | None
    """The installed service file, or None."""
    last_cycle: CycleRecord | None
    proposals: int
    """Lessons and consolidations waiting for review."""
    briefing: bool
    """A proposed ``briefing.md`` waits for review."""
    ended_sessions: int
    """Sessions Claude Code ended (the plugin's hook) that no cycle has dreamed yet."""
    new_projects: list[str] = field(default_factory=list)
    """Projects whose transcripts hold content no cycle has dreamed."""

    def to_json(self) -> dict[str, object]:
        last = self.last_cycle
        return {
            "watch": {"running": self.running, "pid": self.pid, "since": self.since, "service": self.service},
            "last_dream": None
            if last is None
            else {
                "id": last.id,
                "date": last.date,
                "trigger": last.trigger,
                "status": last.status,
                "started_at": last.started_at,
                "completed_at": last.completed_at,
            },
            "waiting": {
                "proposals": self.proposals,
                "briefing": self.briefing,
                "ended_sessions": self.ended_sessions,
                "projects_with_new_content": self.new_projects,
            },
        }


def watch_status(ws: Workspace, platform: str | None = None) -> WatchStatus:
    """Whether watch runs, the last cycle, and what waits (reads only)."""
    config = ws.config
    held = holder(config.watch_lock_path)
    try:
        unit: ServiceUnit | None = service_unit(config, platform=platform)
    except ConfigError:
        unit = None
    last = cycles.listed(ws.ledger, 1)
    return WatchStatus(
        running=held is not None,
        pid=held[0] or None if held else None,
        since=held[1] or None if held else None,
        service=str(unit.path) if unit is not None and unit.path.is_file() else None,
        last_cycle=last[0] if last else None,
        proposals=ws.ledger.pending_count() + sum(ws.consolidations_waiting().values()),
        briefing=ws.waiting_briefing() is not None,
        ended_sessions=len(ended.read_all(config)),
        new_projects=projects_with_new_content(config, ws.ledger),
    )
