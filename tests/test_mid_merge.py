"""A memory repository in the middle of a merge (``MEMORY.md`` conflicted): every writer of dreamtui's
refuses with one line and touches nothing — not the conflicted file, not the index, not HEAD.

Real git repositories, a real merge conflict, the real ledger and the real CLI.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.candidates import make_pending
from fakes.cli_world import folder_args
from fakes.gitrepo import git

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.core.ledger import Ledger, briefings, intents
from dreamtui.core.memory import briefing, decisions, outside
from dreamtui.core.memory.review import write_review


def state_of(root: Path) -> tuple[bytes, str, str, str]:
    """What a write would change: MEMORY.md's bytes, the index (with its conflict stages), the status, HEAD."""
    return (
        (root / "MEMORY.md").read_bytes(),
        git(root, "ls-files", "-s"),
        git(root, "status", "--porcelain", "--untracked-files=all"),
        git(root, "rev-parse", "HEAD"),
    )


@pytest.fixture
def mid_merge(config: Config, ledger: Ledger, git_home: Path) -> Path:
    """The memory repository with one accepted memory, then a merge whose MEMORY.md conflicts."""
    accepted = make_pending(ledger, 1)
    decisions.accept(config, ledger, accepted.id)  # something for undo to revert
    root = config.memory
    git(root, "checkout", "-q", "-b", "side")
    (root / "MEMORY.md").write_text("- [Side](side.md) — the other branch\n")
    git(root, "commit", "-q", "-am", "side")
    git(root, "checkout", "-q", "main")
    (root / "MEMORY.md").write_text("- [Main](main.md) — this branch\n")
    git(root, "commit", "-q", "-am", "main")
    git(root, "merge", "side", check=False)
    assert "UU MEMORY.md" in git(root, "status", "--porcelain")
    return root


def refuses(write: Callable[[], object], root: Path) -> str:
    before = state_of(root)
    with pytest.raises(DreamError) as caught:
        write()
    message = str(caught.value)
    assert "merge is in progress" in message and "\n" not in message
    assert state_of(root) == before
    return message


def test_rejecting_an_outside_change_mid_merge_refuses_and_leaves_the_conflicted_index_alone(
    config: Config, ledger: Ledger, mid_merge: Path
) -> None:
    report = outside.scan(config, ledger)
    (item,) = [i for i in outside.items(ledger) if i.path == "MEMORY.md"]
    refuses(lambda: outside.reject(config, ledger, item.id, "not mine"), mid_merge)
    refuses(lambda: outside.accept(config, ledger, item.id), mid_merge)
    assert outside.get(ledger, item.id).status == "pending", report
    conflicted = (mid_merge / "MEMORY.md").read_text()
    assert "<<<<<<<" in conflicted and ">>>>>>>" in conflicted  # the person's merge, as git left it


def test_the_outside_reject_command_mid_merge_is_one_line_and_exit_2(
    config: Config, ledger: Ledger, mid_merge: Path
) -> None:
    outside.scan(config, ledger)
    (item,) = [i for i in outside.items(ledger) if i.path == "MEMORY.md"]
    before = state_of(mid_merge)
    flags = [
        *folder_args(config),
    ]
    result = CliRunner().invoke(cli, [*flags, "outside", "reject", item.id, "--reason", "no"])
    assert result.exit_code == 2, result.output
    assert "merge is in progress" in result.output and len(result.output.strip().splitlines()) == 1
    assert state_of(mid_merge) == before


def test_every_writer_refuses_mid_merge_and_touches_nothing(
    config: Config, ledger: Ledger, mid_merge: Path
) -> None:
    pending = make_pending(ledger, 2)
    bid = briefings.propose(
        ledger,
        cycle_id=None,
        text="# Briefing\n",
        sources=[],
        auto=False,
        commit=None,
        now="2026-02-03T09:00:00Z",
    )
    writers: dict[str, Callable[[], object]] = {
        "accept": lambda: decisions.accept(config, ledger, pending.id),
        "undo": lambda: decisions.undo_last(config, ledger),
        "review": lambda: write_review(config, ledger, "2026-02-03"),
        "briefing accept": lambda: briefing.accept_briefing(config, ledger, bid),
        "revert": lambda: decisions.revert_memory(config, ledger, "c00000000001"),
    }
    for name, write in writers.items():
        assert refuses(write, mid_merge), name
    assert ledger.get_candidate(pending.id).status == "pending"
    assert briefing.get_proposal(ledger, bid).status == "pending"


def test_reconcile_mid_merge_puts_nothing_back_and_keeps_the_interrupted_write_for_later(
    config: Config, ledger: Ledger, mid_merge: Path
) -> None:
    """An accept killed after writing its topic file, then a merge started: reconcile leaves the
    file and the intent for a run after the merge, and says so."""
    data = b"---\nname: half\n---\n\nhalf written\n"
    (mid_merge / "half.md").write_bytes(data)
    cand = make_pending(ledger, 3)
    intents.record(
        ledger,
        cand.id,
        "accept",
        {"half.md": hashlib.sha256(data).hexdigest()},
        [],
        {},
        "2026-02-03T09:00:00Z",
    )
    before = state_of(mid_merge)
    report = decisions.reconcile(config, ledger)
    assert state_of(mid_merge) == before and (mid_merge / "half.md").read_bytes() == data
    assert any("merge is in progress" in n for n in report.notices)
    assert intents.count(ledger) == 1
    git(mid_merge, "merge", "--abort")
    decisions.reconcile(config, ledger)  # after the merge: the interrupted write is put back
    assert not (mid_merge / "half.md").exists() and intents.count(ledger) == 0
