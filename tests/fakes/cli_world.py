"""Small pieces shared by CLI tests: hand-written session records, what git shows a person, a user without root."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import git
import pytest

from dreamtui.core.config import Config

SESSION = "11111111-2222-4333-8444-555555555555"


def porcelain(repo_dir: Path) -> tuple[str, str, str]:
    """What a person sees: status, unstaged diff, staged diff."""
    g = git.Repo(repo_dir).git
    return g.status("--porcelain"), g.diff(), g.diff("--cached")


def unprivileged() -> list[str]:
    """A command prefix that makes file permissions apply (root bypasses them), or skip."""
    if os.geteuid() != 0:
        return []
    if subprocess.run(["sh", "-c", "command -v setpriv"], capture_output=True).returncode != 0:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    return [
        "setpriv",
        "--bounding-set=-dac_override,-dac_read_search",
        "--inh-caps=-dac_override,-dac_read_search",
    ]


def record(i: int, role: str, text: str, session: str = SESSION) -> dict[str, object]:
    rec: dict[str, object] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/x",
        "sessionId": session,
        "version": "2.0.55",
        "type": role,
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "timestamp": f"2025-11-29T15:{i:02d}:00.000Z",
    }
    if role == "user":
        rec["message"] = {"role": "user", "content": text}
    else:
        rec["message"] = {
            "id": f"msg_{i}",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": text}],
        }
    return rec


def write_records(folder: Path, turns: list[tuple[str, str]], session: str = SESSION) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i, (role, text) in enumerate(turns):
            fh.write(json.dumps(record(i, role, text, session)) + "\n")
    old = 1_700_000_000
    os.utime(path, (old, old))  # long finished: not deferred as still being written
    return path


LESSON_TURNS = [
    ("user", "Please add a dry run flag to the deploy script so I can test it safely before release."),
    ("assistant", "I'll add the flag now."),
    (
        "user",
        "No, never edit the generated files directly; always change the template instead because "
        "the generator overwrites them.",
    ),
    ("assistant", "Understood, I will edit the template."),
]


def folder_args(config: Config) -> list[str]:
    """The global folder flags naming ``config``'s folders (``--memory M --state S --transcripts T``)."""
    return [
        "--memory",
        str(config.memory),
        "--state",
        str(config.state),
        "--transcripts",
        str(config.transcripts),
    ]
