"""Issue 24: the truth of review. The diff is git's own and never joins or re-adds lines; every
decision of any kind (proposal, outside change, briefing) is undone in the order it was made.
Real git repositories, a real ledger, real ``git diff``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.candidates import make_pending as make
from fakes.cli_world import folder_args
from fakes.gitrepo import git

from dreamtui.cli.main import cli
from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger, briefings
from dreamtui.core.memory import briefing, decisions, gitops, outside, textdiff, undo
from dreamtui.services.workspace import Workspace

INDEX = "# Memory\n- [Tests](tests.md) — never mock the session."  # no final newline, as Claude Code writes


@pytest.fixture
def world(config: Config, ledger: Ledger, git_home: Path) -> tuple[Config, Ledger, Path]:
    """A memory repository whose ``MEMORY.md`` has no final newline, and one topic file."""
    root = config.memory
    repo = gitops.open_repo(root)
    (root / "MEMORY.md").write_text(INDEX)
    (root / "tests.md").write_text(
        "---\nname: tests\ndescription: t\ntype: feedback\n---\n\nNever mock it.\n"
    )
    gitops.commit_paths(repo, ["MEMORY.md", "tests.md"], "seed", {})
    return config, ledger, root


# -- the diff ------------------------------------------------------------------------------------


def test_a_changed_last_line_without_final_newline_is_one_removed_and_one_added_line() -> None:
    old = "# Memory\nnever mock the session."
    new = "# Memory\nRun the test suite with pytest -q -x"
    lines = textdiff.unified(old, new, "a/MEMORY.md", "b/MEMORY.md")
    assert lines[:3] == ["--- a/MEMORY.md", "+++ b/MEMORY.md", "@@ -1,2 +1,2 @@"]
    assert lines[3:6] == [" # Memory", "-never mock the session.", "+Run the test suite with pytest -q -x"]
    assert not any("session.+Run" in line for line in lines)  # difflib's keepends diff joined them


def test_an_appended_line_is_one_added_line_and_the_missing_newline_is_said(world) -> None:
    config, ledger, root = world
    (root / "MEMORY.md").write_text(INDEX + "\n- [Style](style.md) — black")
    outside.scan(config, ledger)
    (item,) = outside.items(ledger)
    diff = outside.diff(config, item).splitlines()
    changed = [ln for ln in diff if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    assert changed == ["+- [Style](style.md) — black"]  # not the unchanged last line removed and re-added
    # a newline added at the end alone is said, not drawn as a changed line
    assert textdiff.unified("a\nb", "a\nb\n") == [
        "--- a",
        "+++ b",
        f"{textdiff.NO_NEWLINE} (before this change)",
    ]


def test_the_hunks_are_gits_own_even_with_a_persons_diff_configuration(
    world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = "".join(f"line {i}\n" for i in range(30))
    new = old.replace("line 3\n", "").replace("line 20\n", "line twenty\n") + "the end\n"
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text(old)
    b.write_text(new)
    got = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--", str(a), str(b)], capture_output=True, text=True
    ).stdout.splitlines()
    gits = got[next(i for i, ln in enumerate(got) if ln.startswith("@@")) :]
    # a person's configuration (another algorithm, colour, no context) changes nothing dreamtui shows
    home_config = Path.home() / ".gitconfig"
    home_config.write_text("[diff]\n\talgorithm = patience\n\tcontext = 0\n[color]\n\tui = always\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home_config))
    assert textdiff.unified(old, new)[2:] == gits


# -- undo in the order decisions were made ---------------------------------------------------------


def test_undo_after_an_outside_accept_takes_back_that_accept_not_an_older_rejection(world) -> None:
    config, ledger, root = world
    cand = make(ledger, 1)
    decisions.reject(ledger, cand.id, "wrong", "no")
    # a second line for a file there (a link to a missing file would ask first: the index invariant)
    (root / "MEMORY.md").write_text(INDEX + "\n- [Style](tests.md) — black\n")
    outside.scan(config, ledger)
    (item,) = outside.items(ledger)
    accepted = outside.accept(config, ledger, item.id)
    assert git(root, "rev-parse", "HEAD").strip() == accepted

    result = undo.undo_last(config, ledger)
    assert result.kind == "outside" and item.id in result.candidate_id
    assert ledger.get_candidate(cand.id).status == "rejected"  # the older rejection stands
    assert git(root, "show", "HEAD:MEMORY.md") == INDEX  # the accept is taken back by a commit
    assert (root / "MEMORY.md").read_text().endswith("black\n")  # the change itself is kept, waiting
    assert [i.id for i in outside.items(ledger)] == [item.id]
    assert outside.scan(config, ledger).new == []  # the scan sees the same waiting item

    # the next undo takes back the rejection; then nothing is left
    assert undo.undo_last(config, ledger).candidate_id == cand.id
    assert ledger.get_candidate(cand.id).status == "pending"
    with pytest.raises(decisions.DecisionError, match="nothing to undo"):
        undo.undo_last(config, ledger)
    # and the item can be accepted again
    outside.accept(config, ledger, item.id)
    assert git(root, "show", "HEAD:MEMORY.md").endswith("black\n")


def test_undo_of_an_outside_reject_puts_the_rejected_bytes_back_for_review(world) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("rewritten by auto memory\n")
    (root / "new.md").write_text("a new topic file\n")
    outside.scan(config, ledger)
    by_path = {i.path: i for i in outside.items(ledger)}
    outside.reject(config, ledger, by_path["tests.md"].id, "not this")
    outside.reject(config, ledger, by_path["new.md"].id, "not this either")
    assert not (root / "new.md").exists() and "Never mock it." in (root / "tests.md").read_text()

    undo.undo_last(config, ledger)  # the later reject first: the new file is back
    assert (root / "new.md").read_text() == "a new topic file\n"
    assert "Never mock it." in (root / "tests.md").read_text()
    undo.undo_last(config, ledger)
    assert (root / "tests.md").read_text() == "rewritten by auto memory\n"
    assert sorted(i.path for i in outside.items(ledger)) == ["new.md", "tests.md"]
    assert outside.scan(config, ledger).new == []
    assert git(root, "status", "--porcelain").split() == ["M", "tests.md", "??", "new.md"]


def test_undo_refuses_when_the_file_changed_since_and_changes_nothing(world) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("rewritten\n")
    outside.scan(config, ledger)
    (item,) = outside.items(ledger)
    outside.reject(config, ledger, item.id, "no")
    (root / "tests.md").write_text("written again by hand\n")
    with pytest.raises(outside.OutsideError, match="tests.md changed since"):
        undo.undo_last(config, ledger)
    assert (root / "tests.md").read_text() == "written again by hand\n"
    assert outside.get(ledger, item.id).status == "rejected"


def test_briefing_accept_and_reject_are_undone_in_order_with_proposals(world) -> None:
    config, ledger, root = world
    now = clock.now_iso()
    first = briefings.propose(
        ledger, cycle_id=None, text="# Briefing\n\none\n", sources=[], auto=False, commit=None, now=now
    )
    briefing.accept_briefing(config, ledger, first)
    cand = make(ledger, 2)
    decisions.skip(ledger, cand.id)
    second = briefings.propose(
        ledger, cycle_id=None, text="# Briefing\n\ntwo\n", sources=[], auto=False, commit=None, now=now
    )
    briefing.reject_briefing(config, ledger, second, reason="says too little")

    undo.undo_last(config, ledger)  # the reject: #2 waits again
    assert briefings.get(ledger, second).status == "pending"
    assert briefings.get(ledger, first).status == "accepted"
    assert undo.undo_last(config, ledger).candidate_id == cand.id  # then the skip
    undo.undo_last(config, ledger)  # then the accept of #1: briefing.md as before it, #1 waits
    assert briefings.get(ledger, first).status == "pending"
    assert not (root / "briefing.md").exists()
    assert "briefing.md" not in git(root, "ls-files")


def test_dreamtui_undo_on_the_command_line_undoes_the_latest_decision_of_any_kind(world) -> None:
    config, ledger, root = world
    cand = make(ledger, 3)
    decisions.reject(ledger, cand.id, "wrong", "no")
    (root / "tests.md").write_text("rewritten\n")
    outside.scan(config, ledger)
    (item,) = outside.items(ledger)
    outside.accept(config, ledger, item.id)
    args = [
        *folder_args(config),
    ]
    out = CliRunner().invoke(cli, [*args, "undo"])
    assert out.exit_code == 0, out.output
    assert "accept of the outside change" in out.output and item.id in out.output
    assert ledger.get_candidate(cand.id).status == "rejected"
    with Workspace(config) as ws:
        assert ws.undo().candidate_id == cand.id


def test_undo_of_mine_takes_back_its_one_commit_of_several_files_and_their_writer(world) -> None:
    config, ledger, root = world
    (root / "a.md").write_text("mine a\n")
    (root / "tests.md").unlink()
    outside.scan(config, ledger)
    before = {i.id: i.writer for i in outside.items(ledger)}
    head = git(root, "rev-parse", "HEAD").strip()
    outside.accept_mine(config, ledger)
    assert not outside.items(ledger)
    undo.undo_last(config, ledger)
    assert {i.id: i.writer for i in outside.items(ledger)} == before  # both wait again, as they were
    assert git(root, "diff", "--name-status", head, "HEAD") == ""  # the tree as before the commit
    assert not (root / "tests.md").exists() and (root / "a.md").read_text() == "mine a\n"
