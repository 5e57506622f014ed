"""Issue 34 §3: an outside batch is one decision, index lines included, and a reject never leaves
``MEMORY.md`` linking a file it deletes. Real git repositories, the real scan, the real undo."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.gitrepo import git
from test_outside import now_iso, write_transcript

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops, outside, undo

INDEX = "- [Tests](tests.md) — run them\n- [Style](style.md) — black\n- [Old](old.md) — old\n"


@pytest.fixture
def world(config: Config, ledger: Ledger, git_home: Path) -> tuple[Config, Ledger, Path]:
    """A memory repository with an index and three topic files, committed (as in test_outside)."""
    root = config.memory
    repo = gitops.open_repo(root)
    (root / "MEMORY.md").write_text(INDEX)
    for name in ("tests", "style", "old"):
        (root / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {name}\ntype: feedback\n---\n\n"
            f"The {name} lesson, a few words long so renames are told apart.\n"
        )
    gitops.commit_paths(repo, ["MEMORY.md", "tests.md", "style.md", "old.md"], "seed", {})
    return config, ledger, root


def person_bulk_edit(root: Path) -> None:
    """The person's own bulk edit: three deletions, one rewrite, MEMORY.md edited; no transcript."""
    for name in ("style", "old", "tests"):
        (root / f"{name}.md").unlink()
    (root / "notes.md").write_text("---\nname: notes\n---\n\nEverything, merged by hand.\n")
    git(root, "add", "notes.md")
    git(root, "-c", "user.name=k", "-c", "user.email=k@x", "commit", "-qm", "notes")
    (root / "notes.md").write_text("---\nname: notes\n---\n\nEverything, merged by hand, rewritten.\n")
    (root / "MEMORY.md").write_text("- [Notes](notes.md) — all of it\n")


def test_a_bulk_edit_with_no_transcript_is_one_batch_with_its_index_and_no_writer_guessed(world) -> None:
    config, ledger, root = world
    person_bulk_edit(root)
    outside.scan(config, ledger)
    [batch] = outside.batches(ledger)
    assert batch.summary() == "removed 3 files, rewrote 1, edited MEMORY.md together (writer not known)"
    members = [i for i in outside.items(ledger) if i.batch == batch.id]
    assert sorted(i.path for i in members) == ["MEMORY.md", "notes.md", "old.md", "style.md", "tests.md"]
    assert {i.writer for i in members} == {"unknown"}
    assert "auto dream" not in outside.writer_stats(ledger)


def test_a_batch_with_a_transcript_names_its_writer(world) -> None:
    config, ledger, root = world
    for name in ("style", "old", "tests"):
        (root / f"{name}.md").unlink()
    write_transcript(config, "tests.md", now_iso(), tool="Bash", sub="workflows/wf1")
    outside.scan(config, ledger)
    [batch] = outside.batches(ledger)
    assert batch.summary().startswith("auto dream removed 3 files")


def test_restoring_a_batch_brings_back_its_index_lines_and_one_undo_takes_it_all_back(world) -> None:
    config, ledger, root = world
    person_bulk_edit(root)
    outside.scan(config, ledger)
    [batch] = outside.batches(ledger)
    item = next(i for i in outside.items(ledger) if i.path == "old.md")
    effect = outside.reject_effect(config, ledger, item)
    assert effect[0].startswith("One decision for the whole batch") and "5 changes" in effect[0]
    assert any(line.startswith("MEMORY.md is put back") and "old.md" in line for line in effect)
    done = outside.restore_batch(config, ledger, batch.id, "too much at once")
    assert len(done) == 5 and outside.items(ledger) == []
    assert (root / "MEMORY.md").read_text() == INDEX  # the index lines came back with their files
    assert all((root / f"{n}.md").exists() for n in ("tests", "style", "old"))
    assert git(root, "status", "--porcelain") == ""
    result = undo.undo_last(config, ledger)  # one undo: the whole edit waits again
    assert result.kind == "outside"
    assert not (root / "old.md").exists() and (root / "MEMORY.md").read_text().startswith("- [Notes]")
    assert len(outside.items(ledger)) == 5


def test_accepting_one_member_accepts_the_batch_in_one_commit_and_one_undo(world) -> None:
    config, ledger, root = world
    person_bulk_edit(root)
    outside.scan(config, ledger)
    head = git(root, "rev-parse", "HEAD").strip()
    item = next(i for i in outside.items(ledger) if i.path == "tests.md")
    caution = outside.accept_caution(config, ledger, item)
    assert any("one commit takes all 5 changes" in line for line in caution)
    sha = outside.accept(config, ledger, item.id)
    assert git(root, "rev-list", f"{head}..HEAD").split() == [sha]
    changed = git(root, "diff-tree", "--no-commit-id", "-r", "--name-only", sha).split()
    assert sorted(changed) == ["MEMORY.md", "notes.md", "old.md", "style.md", "tests.md"]
    assert outside.items(ledger) == [] and git(root, "status", "--porcelain") == ""
    undo.undo_last(config, ledger)
    assert git(root, "show", "HEAD:MEMORY.md") == INDEX
    assert len(outside.items(ledger)) == 5


def test_the_cli_restore_says_the_index_came_back_too(world) -> None:
    config, ledger, root = world
    person_bulk_edit(root)
    outside.scan(config, ledger)
    [batch] = outside.batches(ledger)
    out = CliRunner().invoke(cli, [*folder_args(config), "outside", "restore", batch.id, "--reason", "no"])
    assert out.exit_code == 0, out.output
    assert "restored 4 files and MEMORY.md (its index lines with them)" in out.output


# -- a rename rejected ----------------------------------------------------------------------------------


def test_rejecting_a_rename_puts_back_the_index_line_that_links_it(world) -> None:
    config, ledger, root = world
    text = (root / "old.md").read_bytes()
    (root / "old.md").unlink()
    (root / "phoenix.md").write_bytes(text)
    (root / "MEMORY.md").write_text(INDEX.replace("(old.md)", "(phoenix.md)"))
    outside.scan(config, ledger)
    rename = next(i for i in outside.items(ledger) if i.kind == "renamed")
    effect = outside.reject_effect(config, ledger, rename)
    assert "phoenix.md is deleted and old.md comes back as committed (HEAD)" in effect
    assert any(line.startswith("MEMORY.md is put back") for line in effect)
    assert not any("dead link" in line for line in effect)  # old.md comes back with its line
    outside.reject(config, ledger, rename.id, "keep the old name")
    assert (root / "old.md").exists() and not (root / "phoenix.md").exists()
    assert (root / "MEMORY.md").read_text() == INDEX  # no link to the deleted file is left
    assert outside.items(ledger) == []


# -- the index invariant -----------------------------------------------------------------------------------


def test_accepting_an_index_that_links_a_missing_file_asks_first_and_names_it(world) -> None:
    config, ledger, root = world
    (root / "MEMORY.md").write_text(INDEX + "- [Phoenix](phoenix.md) — the new name\n")
    outside.scan(config, ledger)
    [item] = outside.items(ledger)
    caution = outside.accept_caution(config, ledger, item)
    assert any("MEMORY.md linking phoenix.md" in line and "dead link" in line for line in caution)
    head = git(root, "rev-parse", "HEAD")
    with pytest.raises(outside.OutsideError, match="phoenix.md.*dead link.*nothing was committed"):
        outside.accept(config, ledger, item.id)
    assert git(root, "rev-parse", "HEAD") == head
    out = CliRunner().invoke(cli, [*folder_args(config), "outside", "accept", item.id])
    assert out.exit_code == 2 and "dead link" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(cli, [*folder_args(config), "outside", "accept", item.id, "--yes"])
    assert out.exit_code == 0, out.output
    assert "MEMORY.md links phoenix.md, which does not exist" in out.output  # said after the decision


def test_every_start_says_what_breaks_the_index(world) -> None:
    from dreamtui.services import Workspace

    config, ledger, root = world
    (root / "MEMORY.md").write_text(INDEX + "- [Gone](gone.md) — nothing there\n")
    git(root, "-c", "user.name=k", "-c", "user.email=k@x", "commit", "-qam", "a dead link, by hand")
    with Workspace(config, ledger) as ws:
        note = ws.reconcile()
    assert note is not None and "MEMORY.md links gone.md, which does not exist (a dead link)" in note


# -- a read-only memory folder -------------------------------------------------------------------------


def test_outside_decisions_on_a_read_only_memory_folder_fail_whole_in_one_line(
    config: Config, ledger: Ledger, git_home: Path, tmp_path: Path
) -> None:
    import os
    import subprocess
    import uuid

    where = tmp_path / f"ro-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        cfg = config.changed(memory=where / "memory")
        root = cfg.memory
        repo = gitops.open_repo(root)
        (root / "MEMORY.md").write_text(INDEX)
        for name in ("tests", "style", "old"):
            (root / f"{name}.md").write_text(f"The {name} lesson.\n")
        gitops.commit_paths(repo, ["MEMORY.md", "tests.md", "style.md", "old.md"], "seed", {})
        (root / "style.md").write_text("an outside rewrite\n")
        outside.scan(cfg, ledger)
        [item] = outside.items(ledger)
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        try:
            for decide in (
                lambda: outside.reject(cfg, ledger, item.id, "no"),
                lambda: outside.accept(cfg, ledger, item.id),
            ):
                with pytest.raises(DreamError) as caught:
                    decide()
                text = str(caught.value)
                assert "Read-only file system" in text and "\n" not in text, text
                assert (root / "style.md").read_text() == "an outside rewrite\n"
            out = CliRunner().invoke(cli, [*folder_args(cfg), "outside", "reject", item.id, "--reason", "no"])
            assert out.exit_code == 2 and "Traceback" not in out.output, out.output
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(where)], check=True)
        assert outside.get(ledger, item.id).status == "pending"
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_start_names_a_memory_dreamtui_wrote_that_the_index_lost(world) -> None:
    from dreamtui.core.memory import decisions
    from dreamtui.core.models import Candidate
    from dreamtui.services import Workspace

    config, ledger, root = world
    cand = Candidate(
        id="c1a2b3c4d5e6",
        session="s1",
        project="-home-kim-app",
        transcript="/t.jsonl",
        claim="Run the migrations before the tests",
        why="schema drifts",
        how_to_apply="make migrate",
        type="feedback",
        scope="global",
        quote="always run migrations",
        extractor="heuristic",
        model=None,
        created_at=now_iso(),
        updated_at=now_iso(),
    )
    ledger.put_candidate(cand)
    path = decisions.accept(config, ledger, cand.id).path
    (root / "MEMORY.md").write_text(INDEX)  # the person's editor drops the lesson's line
    git(root, "-c", "user.name=k", "-c", "user.email=k@x", "commit", "-qam", "tidy the index")
    with Workspace(config, ledger) as ws:
        note = ws.reconcile()
    assert note is not None and f"{path} (a memory dreamtui wrote) is not linked from MEMORY.md" in note


def test_rejecting_a_new_file_the_committed_index_links_says_the_link_goes_dead(world) -> None:
    config, ledger, root = world
    (root / "MEMORY.md").write_text(INDEX + "- [New](new.md) — linked before the file came\n")
    git(root, "-c", "user.name=k", "-c", "user.email=k@x", "commit", "-qam", "index first")
    (root / "new.md").write_text("the new lesson\n")
    outside.scan(config, ledger)
    [item] = outside.items(ledger)
    effect = outside.reject_effect(config, ledger, item)
    assert any(
        line.startswith("MEMORY.md would still link new.md, which this reject deletes") for line in effect
    )
