"""The daily review file: every surviving candidate of the day, regenerated and committed."""

from __future__ import annotations

import git
import pytest

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, gitops
from dreamtui.core.memory.review import ReviewError, write_review
from dreamtui.core.models import Candidate, Match

pytestmark = pytest.mark.usefixtures("git_home")


def make(ledger: Ledger, n: int, created: str = "2026-04-01T09:00:00Z", **kw: object) -> Candidate:
    fields: dict[str, object] = dict(
        id=f"r{n:03d}", session=f"sess-{n}", project="p", transcript="t", claim=f"Lesson number {n}",
        why=f"why {n}", how_to_apply=f"how {n}", type="feedback", scope="global", quote=f"the quote {n}",
        extractor="heuristic", model=None, provenance="person",
        matches=[Match("t", 40 + n, None, None, "person")], created_at=created)
    fields.update(kw)
    cand = Candidate(**fields)  # type: ignore[arg-type]
    ledger.put_candidate(cand)
    return cand


def test_review_lists_every_survivor_of_the_day(config: Config, ledger: Ledger) -> None:
    make(ledger, 1, "2026-04-01T09:00:00Z")
    make(ledger, 2, "2026-04-01T10:00:00Z", quote="has ``` fences\nand [bold]markup[/bold]")
    make(ledger, 3, "2026-04-01T11:00:00Z", status="dropped", drop_reason="unverified")
    make(ledger, 4, "2026-04-02T09:00:00Z")
    with ledger.write() as c:
        c.execute("INSERT INTO dream_cycles (id, chat_id, date, status, started_at) "
                  "VALUES (7, 'p', '2026-04-01', 'completed', '2026-04-02T00:10:00Z')")
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
