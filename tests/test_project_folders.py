"""Project folders in the memory repository: distinct for distinct projects, old folders still found
(issue 12, item 9). Real gate, real ledger, real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.scopes import accept_in, run, session
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import layout as memory

NIHON = "-home-u-日本語"
CHUUBUN = "-home-u-中文"


@pytest.fixture(autouse=True)
def _home(git_home: Path) -> None:
    """Commits in the memory repository need an identity (and nothing of the user's)."""


names = st.text(min_size=0, max_size=80) | st.from_regex(r"\A-?[a-zA-Z0-9]+(-{1,2}[a-zA-Z0-9]+){0,6}\Z")


@settings(max_examples=400, deadline=None)
@given(st.lists(names, min_size=2, max_size=8, unique=True))
@example([NIHON, CHUUBUN, "🙂", "...", "memory", "memory-note", "-memory-note", "-memory", ""])
@example(["-home-u-App", "-home-u-app", "-home-u-APP", "home-u-app", "-home-u--app", "-home-u-app-"])
@example(["-home-kim-" + "x" * 70, "-home-kim-" + "x" * 71])
def test_project_folders_are_injective_for_any_names(projects: list[str]) -> None:
    folders = [memory.project_folder(name) for name in projects]
    # distinct even on a case-insensitive disk (every folder name is lowercase ASCII)
    assert len({f.casefold() for f in folders}) == len(projects), dict(zip(projects, folders, strict=True))
    for folder in folders:
        assert folder == folder.lower() and folder.isascii() and len(folder) <= memory.SLUG_MAX
        memory.safe_path(Path("/nonexistent-root"), f"{memory.PROJECTS}/{folder}/x.md")  # a safe name


@given(st.from_regex(r"\A-[a-z0-9]+(-[a-z0-9]+){0,6}\Z"))
def test_a_claude_code_lowercase_project_keeps_its_old_folder(name: str) -> None:
    """Every folder the first versions made for such a name is found under the same name."""
    if len(name) <= memory.SLUG_MAX:
        assert memory.project_folder(name) == memory.legacy_project_folder(name) == name[1:]


def test_the_names_that_collided_get_readable_distinct_folders() -> None:
    assert memory.legacy_project_folder(NIHON) == memory.legacy_project_folder(CHUUBUN) == "home-u"
    nihon, chuubun = memory.project_folder(NIHON), memory.project_folder(CHUUBUN)
    assert nihon.startswith("home-u--") and chuubun.startswith("home-u--") and nihon != chuubun
    assert memory.project_folder(NIHON) == nihon  # stable
    assert memory.project_folder("-home-kim-src-payments-api") == "home-kim-src-payments-api"
    assert memory.project_folder("-Users-kim-app").startswith("users-kim-app--")
    assert len({memory.project_folder(n) for n in ("🙂", "...", "memory", "-memory-note")}) == 4


def test_one_projects_lesson_is_not_dropped_as_an_alike_named_projects_duplicate(
    config: Config, ledger: Ledger
) -> None:
    rel = accept_in(config, ledger, NIHON, "s-nihon-1")
    assert rel.startswith(f"projects/{memory.project_folder(NIHON)}/")
    report = run(config, ledger, session(config, CHUUBUN, "s-chuubun-1"), CHUUBUN)
    assert report.dropped == {} and len(report.kept) == 1  # shown beside, never dropped
    again = run(config, ledger, session(config, NIHON, "s-nihon-2"), NIHON)
    assert again.dropped == {"duplicate": 1}  # in its own project it is a duplicate, as before


def test_a_folder_of_the_old_mapping_stays_its_projects_and_no_one_elses(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as old_world:  # a memory accepted by the first versions: lossy folder
        old_world.setattr(memory, "project_folder", memory.legacy_project_folder)
        rel = accept_in(config, ledger, NIHON, "s-nihon-1")
    assert rel.startswith("projects/home-u/")
    # the person's accepted memory is still found as that project's: its lesson again is a duplicate
    again = run(config, ledger, session(config, NIHON, "s-nihon-2"), NIHON)
    assert again.dropped == {"duplicate": 1}
    (dropped,) = [c for c in ledger.list_candidates(status="dropped") if c.session == "s-nihon-2"]
    assert dropped.duplicate_of == rel
    # and the project whose old slug was the same is not its duplicate any more
    other = run(config, ledger, session(config, CHUUBUN, "s-chuubun-1"), CHUUBUN)
    assert other.dropped == {} and len(other.kept) == 1


def test_a_hand_made_folder_without_ledger_record_is_read_as_the_first_versions_read_it(
    config: Config, ledger: Ledger
) -> None:
    from fakes.scopes import CLAIM, topic

    topic(config, "projects/home-u/pipeline.md", CLAIM)  # no accept in the ledger: owner unknown
    for project, sid in ((NIHON, "s-1"), (CHUUBUN, "s-2")):
        report = run(config, ledger, session(config, project, sid), project)
        assert report.dropped == {"duplicate": 1}, project  # lossy, as before: nothing is lost
