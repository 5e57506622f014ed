"""``dreamtui outside`` (issue 17 item 5): list, show, accept, mine, reject, restore — a real repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner
from fakes.cli_world import folder_args

from dreamtui.cli.main import cli
from dreamtui.core.memory import gitops


def _run(config, *args: str):
    return CliRunner().invoke(
        cli,
        [
            *folder_args(config),
            *args,
        ],
    )


def _seed(root: Path, names: list[str]) -> None:
    repo = gitops.open_repo(root)
    (root / "MEMORY.md").write_text("".join(f"- [{n}]({n}.md) — {n}\n" for n in names))
    for n in names:
        (root / f"{n}.md").write_text(f"lesson {n}\n")
    gitops.commit_paths(repo, ["MEMORY.md", *(f"{n}.md" for n in names)], "seed", {})


def test_outside_lists_shows_and_decides(config, git_home) -> None:
    root = config.memory
    _seed(root, ["a", "b", "c", "d"])
    (root / "a.md").write_text("lesson a, rewritten\x1b[31m\n")
    (root / "e.md").write_text("a new one\n")
    listed = _run(config, "outside", "--json")
    assert listed.exit_code == 0, listed.output
    items = {i["path"]: i for i in json.loads(listed.output)["items"]}
    assert set(items) == {"a.md", "e.md"}
    shown = _run(config, "outside", "show", items["a.md"]["id"])
    assert "+lesson a, rewritten" in shown.output and "\x1b" not in shown.output  # shown literally
    assert "taken as the person's own edit" in shown.output
    out = _run(config, "outside", "accept", items["e.md"]["id"])
    assert out.exit_code == 0 and "accepted" in out.output
    out = _run(config, "outside", "reject", items["a.md"]["id"], "--reason", "keep the old one")
    assert out.exit_code == 0
    assert (root / "a.md").read_text() == "lesson a\n"
    assert _run(config, "outside").output.strip() == "no outside changes"
    again = _run(config, "outside", "reject", items["a.md"]["id"], "--reason", "x")
    assert again.exit_code == 2 and "already rejected" in again.output
    # the candidates list says when outside changes wait
    (root / "b.md").write_text("mine\n")
    assert "wait for review: dreamtui outside" in _run(config, "candidates").output
    assert _run(config, "outside", "mine").exit_code == 0
    log = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%B"], capture_output=True, text=True
    ).stdout
    assert "Dreamtui-Outside: mine" in log


def test_outside_batch_is_loud_and_restored_in_one_step(config, git_home) -> None:
    root = config.memory
    names = [f"m{n}" for n in range(6)]
    _seed(root, names)
    for n in names[:5]:
        (root / f"{n}.md").unlink()
    (root / "m5.md").write_text("merged everything\n")
    out = _run(config, "outside")
    assert "removed 5 files, rewrote 1 together (writer not known)" in out.output
    batch = out.output.split("batch ", 1)[1].split(":", 1)[0]
    restored = _run(config, "outside", "restore", batch, "--reason", "too much")
    assert restored.exit_code == 0 and "restored 6 files" in restored.output
    assert all((root / f"{n}.md").exists() for n in names)
    assert (root / "m5.md").read_text() == "lesson m5\n"
