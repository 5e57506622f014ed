"""The daily review file: every surviving candidate of the day, regenerated and committed."""

from __future__ import annotations

import git
import pytest
from fakes.candidates import make
from fakes.cli_world import porcelain

from dreamtui.core.config import Config
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, gitops
from dreamtui.core.memory.review import ReviewError, write_review

pytestmark = pytest.mark.usefixtures("git_home")


def test_review_lists_every_survivor_of_the_day(config: Config, ledger: Ledger) -> None:
    make(ledger, 1, "2026-04-01T09:00:00Z")
    make(ledger, 2, "2026-04-01T10:00:00Z", quote="has ``` fences\nand [bold]markup[/bold]")
    make(ledger, 3, "2026-04-01T11:00:00Z", status="dropped", drop_reason="unverified")
    make(ledger, 4, "2026-04-02T09:00:00Z")
    with ledger.write() as c:
        c.execute(
            "INSERT INTO dream_cycles (id, chat_id, date, status, started_at) "
            "VALUES (7, 'p', '2026-04-01', 'completed', '2026-04-02T00:10:00Z')"
        )
    make(ledger, 5, "2026-04-02T00:20:00Z", cycle_id=7)  # made by that day's cycle, after midnight
    decisions.reject(ledger, "r001", "wrong", "no")
    path = write_review(config, ledger, "2026-04-01")
    assert path == config.memory / "reviews" / "review-2026-04-01.md"
    text = path.read_text()
    assert "3 candidates survived the gate: 2 pending, 1 rejected." in text
    for number, n in enumerate((1, 2, 5), start=1):
        assert f"## {number}. Lesson number {n}\n" in text
        assert f"- **Why:** why {n}" in text and f"- **How to apply:** how {n}" in text
        assert f"session `sess-{n}`, line {40 + n}" in text
    assert "Lesson number 3" not in text and "Lesson number 4" not in text
    assert "````text\nhas ``` fences\nand [bold]markup[/bold]\n````" in text
    repo = git.Repo(config.memory)
    info = gitops.list_commits(repo)[0]
    assert info.trailers == {"Dreamtui-Review": ["2026-04-01"]}
    assert gitops.changed_paths(repo, info.sha) == ["reviews/review-2026-04-01.md"]


def test_review_is_regenerated_not_appended(config: Config, ledger: Ledger) -> None:
    make(ledger, 1, "2026-04-01T09:00:00Z")
    path = write_review(config, ledger, "2026-04-01")
    first = path.read_text()
    write_review(config, ledger, "2026-04-01")
    assert path.read_text() == first
    repo = git.Repo(config.memory)
    assert len(gitops.list_commits(repo)) == 1  # nothing changed: no second commit
    make(ledger, 2, "2026-04-01T10:00:00Z")
    write_review(config, ledger, "2026-04-01")
    text = path.read_text()
    assert text.count("Lesson number 1") == 2 and text.count("## ") == 2  # heading + claim line, once each
    assert len(gitops.list_commits(repo)) == 2
    assert repo.git.status("--porcelain") == ""


def test_empty_day_and_bad_date(config: Config, ledger: Ledger) -> None:
    assert "No candidate survived" in write_review(config, ledger, "2026-04-09").read_text()
    with pytest.raises(ReviewError, match="not a date"):
        write_review(config, ledger, "../../etc")


@pytest.mark.usefixtures("git_home")
def test_review_refuses_to_overwrite_a_persons_staged_and_unstaged_edits(
    config: Config, ledger: Ledger
) -> None:
    make(ledger, 1)
    path = write_review(config, ledger, "2026-04-01")
    repo = git.Repo(config.memory)
    with path.open("a") as fh:
        fh.write("my staged note\n")
    repo.git.add(str(path))
    with path.open("a") as fh:
        fh.write("my unstaged note\n")
    before = porcelain(config.memory)
    make(ledger, 2)  # the regenerated review would differ
    with pytest.raises(MemoryRepoError, match="uncommitted changes"):
        write_review(config, ledger, "2026-04-01")
    assert porcelain(config.memory) == before
    assert path.read_text().endswith("my staged note\nmy unstaged note\n")


@pytest.mark.usefixtures("git_home")
def test_review_left_uncommitted_by_dreamtui_itself_is_still_committed(
    config: Config, ledger: Ledger
) -> None:
    make(ledger, 1)
    path = write_review(config, ledger, "2026-04-01")
    make(ledger, 2)
    repo = git.Repo(config.memory)
    commits = len(gitops.list_commits(repo))
    write_review(config, ledger, "2026-04-01")
    text = path.read_text()
    # a crash between the write and the commit leaves exactly the bytes dreamtui would write again
    repo.git.reset("-q", "--hard", "HEAD~1")
    path.write_text(text)
    write_review(config, ledger, "2026-04-01")
    assert repo.git.status("--porcelain") == ""
    assert len(gitops.list_commits(repo)) == commits + 1
