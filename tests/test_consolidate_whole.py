"""Issue 34 §3: a consolidation decision is one unit. An undone accept leaves the memory proposable
again, a proposal whose memory changed is proposed again from the new text, a memory holding a secret
or invalid UTF-8 can be consolidated, a rewritten file keeps its mode, a full disk or a read-only
memory folder fails the decision whole (the tree put back, one line), and a kill between the commit
and the ledger is put right at the next start (not at the next consolidation decision)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.gitrepo import git as sh
from test_consolidate import ACCEPT_SCRIPT, FOLDER, PROJECT, memory_repo, project_repo, store, topic

from dreamtui.core.config import Config
from dreamtui.core.dream import consolidate_find as find
from dreamtui.core.dream.consolidation import run_pass
from dreamtui.core.errors import DreamError
from dreamtui.core.ledger import Ledger, intents
from dreamtui.core.ledger import consolidations as rows
from dreamtui.core.memory import consolidate
from dreamtui.services import Workspace

NOW = "2026-04-02T09:00:00Z"
SETTINGS = f"{FOLDER}/settings.md"


@pytest.fixture(autouse=True)
def _home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)


def status(ledger: Ledger, cid: str) -> str:
    item = rows.get(ledger, cid)
    assert item is not None
    return item.status


def tree_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def one_line(error: BaseException) -> str:
    text = str(error)
    assert text and "\n" not in text, text
    return text


# -- proposable again ----------------------------------------------------------------------------------


def test_after_an_undo_the_memory_is_proposed_again(config: Config, ledger: Ledger, tmp_path: Path) -> None:
    root = memory_repo(config, {SETTINGS: topic("Settings", "The settings live in src/settings.py.")})
    repo = project_repo(tmp_path)
    first = run_pass(root, ledger, PROJECT, [], repo_path=repo)
    [cid] = first.ids
    consolidate.accept(config, ledger, cid)
    consolidate.undo(config, ledger, cid)
    assert (root / SETTINGS).exists()  # the memory is back, still naming the missing path
    again = run_pass(root, ledger, PROJECT, [], repo_path=repo)
    assert again.known == 0 and again.proposed["retire"] == 1, again
    [new] = again.ids
    assert new != cid and status(ledger, new) == "pending"
    consolidate.accept(config, ledger, new)
    assert not (root / SETTINGS).exists()


def test_a_proposal_whose_memory_changed_is_proposed_again_from_the_new_text(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    root = memory_repo(config, {SETTINGS: topic("Settings", "The settings live in src/settings.py.")})
    repo = project_repo(tmp_path)
    [old] = run_pass(root, ledger, PROJECT, [], repo_path=repo).ids
    # an earlier accept (here: the person's own committed edit) changes the memory; the path is still gone
    (root / SETTINGS).write_text(topic("Settings", "The settings live in src/settings.py; DEBUG stays off."))
    sh(root, "commit", "-q", "-am", "more about settings")
    with pytest.raises(consolidate.ConsolidationError, match="proposes again from its new text"):
        consolidate.accept(config, ledger, old)
    again = run_pass(root, ledger, PROJECT, [], repo_path=repo)
    assert again.withdrawn == 1 and again.proposed["retire"] == 1, again
    assert rows.get(ledger, old) is None
    [new] = again.ids
    consolidate.accept(config, ledger, new)
    assert not (root / SETTINGS).exists() and sh(root, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    "raw",
    [
        b"The settings live in src/settings.py; the deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789.\n",
        b"The settings live in src/settings.py (caf\xe9 latin-1 byte).\n",
    ],
    ids=["secret", "invalid-utf8"],
)
def test_a_memory_holding_a_secret_or_invalid_utf8_can_be_consolidated(
    config: Config, ledger: Ledger, tmp_path: Path, raw: bytes
) -> None:
    root = memory_repo(config, {SETTINGS: topic("Settings", "placeholder")})
    (root / SETTINGS).write_bytes(b"---\nname: Settings\ndescription: Settings\ntype: project\n---\n\n" + raw)
    sh(root, "commit", "-q", "-am", "as written by another tool")
    [cid] = run_pass(root, ledger, PROJECT, [], repo_path=project_repo(tmp_path)).ids
    result = consolidate.accept(config, ledger, cid)
    assert result.status == "accepted" and not (root / SETTINGS).exists()
    consolidate.undo(config, ledger, cid)
    assert (root / SETTINGS).read_bytes().endswith(raw)  # put back byte for byte


def test_a_rewritten_memory_file_keeps_its_mode(config: Config, ledger: Ledger, tmp_path: Path) -> None:
    rel = f"{FOLDER}/helper.md"
    root = memory_repo(config, {rel: topic("Helper", "The helper lives in lib/old.py and returns 42.")})
    (root / rel).chmod(0o644)
    (root / "MEMORY.md").chmod(0o640)
    [cid] = run_pass(root, ledger, PROJECT, [], repo_path=project_repo(tmp_path)).ids
    consolidate.accept(config, ledger, cid)
    assert "lib/new.py" in (root / rel).read_text()
    assert (root / rel).stat().st_mode & 0o777 == 0o644
    assert (root / "MEMORY.md").stat().st_mode & 0o777 == 0o640
    consolidate.undo(config, ledger, cid)
    assert (root / rel).stat().st_mode & 0o777 == 0o644


# -- faults: the decision fails whole --------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MB tmpfs (needs root and mount); skips where it cannot be mounted."""
    where = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (65536, 1):
            try:
                while fh.write(b"\0" * size):
                    pass
            except OSError:
                pass
    return filler


def big_memories() -> dict[str, str]:
    """Memories large enough that the retire's commit needs more room than the deletion frees."""
    out = {SETTINGS: topic("Settings", "The settings live in src/settings.py.")}
    for n in range(40):
        out[f"{FOLDER}/note-{n}.md"] = topic(f"Note {n}", f"Remember rule number {n}. " * 30)
    return out


def test_a_full_disk_fails_a_retire_whole_and_puts_the_tree_back(
    config: Config, ledger: Ledger, tmp_path: Path, tiny_disk: Path
) -> None:
    cfg = config.changed(memory=tiny_disk / "memory")
    root = memory_repo(cfg, big_memories())
    [cid] = run_pass(root, ledger, PROJECT, [], repo_path=project_repo(tmp_path)).ids
    before, head = tree_of(root), sh(root, "rev-parse", "HEAD")
    fill(tiny_disk)
    with pytest.raises(DreamError) as caught:
        consolidate.accept(cfg, ledger, cid)
    one_line(caught.value)
    assert tree_of(root) == before and sh(root, "rev-parse", "HEAD") == head
    (tiny_disk / "filler").unlink()
    assert sh(root, "status", "--porcelain") == ""
    assert status(ledger, cid) == "pending" and intents.count(ledger) == 0
    consolidate.accept(cfg, ledger, cid)  # with room again, the same decision goes through
    assert not (root / SETTINGS).exists() and sh(root, "status", "--porcelain") == ""


def test_a_read_only_memory_folder_fails_a_retire_whole_in_one_line(
    config: Config, ledger: Ledger, tmp_path: Path, tiny_disk: Path
) -> None:
    cfg = config.changed(memory=tiny_disk / "memory")
    root = memory_repo(cfg, {SETTINGS: topic("Settings", "The settings live in src/settings.py.")})
    [cid] = run_pass(root, ledger, PROJECT, [], repo_path=project_repo(tmp_path)).ids
    before = tree_of(root)
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True)
    try:
        with pytest.raises(DreamError) as caught:
            consolidate.accept(cfg, ledger, cid)
        assert "Read-only file system" in one_line(caught.value)
        assert tree_of(root) == before
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tiny_disk)], check=True)
    assert status(ledger, cid) == "pending" and intents.count(ledger) == 0


# -- a kill between the commit and the ledger --------------------------------------------------------------


def test_a_kill_after_the_commit_is_recorded_at_the_next_start(config: Config, ledger: Ledger) -> None:
    a, b = f"{FOLDER}/pool.md", "pool-size.md"
    body = "Keep the database connection pool at 10 connections in production."
    root = memory_repo(config, {a: topic("Pool", body), b: topic("Pool size", body)})
    [item] = store(ledger, find.find_offline(root, PROJECT))
    child = subprocess.run(
        [sys.executable, "-c", ACCEPT_SCRIPT, str(config.transcripts), str(root), str(config.state), item.id],
        env={**os.environ, consolidate.CRASH_ENV: "consolidate-commit"},
        capture_output=True,
        timeout=60,
    )
    assert child.returncode == -9, child.stderr
    assert status(ledger, item.id) == "pending"  # git is one step ahead
    with Workspace(config, ledger) as ws:
        ws.reconcile()  # what the app and the CLI run at start
    assert status(ledger, item.id) == "accepted"


# -- an update says the new path everywhere ----------------------------------------------------------------


def two_renames(tmp_path: Path) -> Path:
    """A project repository whose ``lib/old.py`` became ``lib/new.py`` and ``tools/run.sh`` became
    ``bin/run.sh``."""
    repo = tmp_path / "shop"
    (repo / "lib").mkdir(parents=True)
    (repo / "tools").mkdir()
    sh(repo, "init", "-q", "-b", "main")
    (repo / "lib" / "old.py").write_text("def helper():\n    return 42\n" * 5)
    (repo / "tools" / "run.sh").write_text("#!/bin/sh\necho run the helper now\n" * 5)
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "first")
    sh(repo, "mv", "lib/old.py", "lib/new.py")
    (repo / "bin").mkdir()
    sh(repo, "mv", "tools/run.sh", "bin/run.sh")
    sh(repo, "commit", "-q", "-m", "moves")
    return repo


def test_an_update_names_every_renamed_path_in_the_body_name_description_and_index(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    rel = f"{FOLDER}/helper.md"
    text = (
        "---\nname: The helper in lib/old.py\ndescription: lib/old.py returns 42; run tools/run.sh\n"
        "type: project\n---\n\nThe helper lives in lib/old.py and returns 42.\n"
        "Start it with ./tools/run.sh, never src/lib/old.py.\n"
    )
    root = memory_repo(config, {rel: text})
    index = (root / "MEMORY.md").read_text().replace("[helper]", "[The helper in lib/old.py]")
    (root / "MEMORY.md").write_text(index)
    sh(root, "commit", "-q", "-am", "index says the path")
    report = run_pass(root, ledger, PROJECT, [], repo_path=two_renames(tmp_path))
    [cid] = report.ids  # one proposal covers both stale paths
    item = rows.get(ledger, cid)
    assert item is not None and item.kind == "update"
    assert "renamed to lib/new.py" in item.evidence and "renamed to bin/run.sh" in item.evidence
    consolidate.accept(config, ledger, cid)
    new, index = (root / rel).read_text(), (root / "MEMORY.md").read_text()
    assert "lib/old.py" not in new.replace("src/lib/old.py", "") and "tools/run.sh" not in new
    assert "name: The helper in lib/new.py" in new
    assert "lib/new.py returns 42; run bin/run.sh" in new.split("\n")[2]
    assert "./bin/run.sh" in new and "src/lib/old.py" in new  # another folder's file is left alone
    assert "[The helper in lib/new.py]" in index and "lib/old.py" not in index
    assert run_pass(root, ledger, PROJECT, [], repo_path=tmp_path / "shop").ids == []  # nothing left stale


# -- offline merges compare what each memory says --------------------------------------------------------


def test_a_lesson_and_another_writers_file_saying_the_same_rule_in_other_words_are_one_merge(
    config: Config, ledger: Ledger
) -> None:
    claim = "Always use pnpm in this repository, never npm or yarn; the lockfile is pnpm-lock.yaml."
    lesson = (
        f"---\nname: {claim[:60]}\ndescription: {claim}\ntype: project\ncandidate: c0123456789\n---\n\n"
        f"{claim}\n\n**Why:** the person said npm breaks the workspace links and CI installs with pnpm.\n\n"
        "**How to apply:** run pnpm install and pnpm add, never npm install.\n"
    )
    theirs = topic("pnpm", "Use pnpm in this repository, not npm or yarn (the lockfile is pnpm-lock.yaml).")
    other = topic(
        "pnpm in CI", "Use pnpm in the CI image too, not npm or yarn (the cache is keyed on pnpm-lock.yaml)."
    )
    mine, auto = f"{FOLDER}/use-pnpm.md", "pnpm.md"
    root = memory_repo(config, {mine: lesson, auto: theirs, f"{FOLDER}/ci.md": other})
    [item] = find.find_offline(root, PROJECT)
    assert item.kind == "merge" and sorted(item.targets) == sorted([mine, auto])
    assert item.keep_path == mine and "what they say" in item.evidence
    rows.add(ledger, item)
    consolidate.accept(config, ledger, item.id)
    assert (root / mine).read_text() == lesson and not (root / auto).exists()
    assert "(pnpm.md)" not in (root / "MEMORY.md").read_text()
