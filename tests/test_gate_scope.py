"""Scope-aware dedup in the real gate: a lesson known only in another project is not a duplicate.

Everything is real: transcripts on disk, a real SQLite ledger, a real git memory repository whose
files are written by ``decisions.accept`` (or by hand, as a person would), and the real gate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.scopes import (
    ACME,
    CLAIM,
    CLAIM_2,
    QUOTE_2,
    SAID_2,
    SHOP,
    accept_in,
    run,
    session,
    topic,
)

from dreamtui.core.config import Config
from dreamtui.core.gate.dedup import DUPLICATE, SUSPECT, DedupIndex
from dreamtui.core.gate.pipeline import Scopes, closest_in_scope
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions


@pytest.fixture(autouse=True)
def _home(git_home: Path) -> None:
    """Commits in the memory repository need an identity (and nothing of the user's)."""


def test_another_projects_memory_is_shown_beside_this_projects_lesson_not_dropping_it(
    config: Config, ledger: Ledger
) -> None:
    rel = accept_in(config, ledger, SHOP, "s-shop-1")
    assert rel.startswith("projects/home-kim-shop/")

    report = run(config, ledger, session(config, ACME, "s-acme-1"), ACME)
    assert report.dropped == {} and report.duplicates == 0
    (kept,) = report.kept
    stored = ledger.get_candidate(kept.id)
    assert stored is not None and stored.status == "pending" and stored.project == ACME
    assert (stored.duplicate_kind, stored.duplicate_of) == ("memory", rel)  # side by side
    assert stored.duplicate_score is not None and stored.duplicate_score >= DUPLICATE
    assert report.related == 1 and report.suspected_duplicates == 1

    # the same lesson again in the project that remembers it: a duplicate, as before
    again = run(config, ledger, session(config, SHOP, "s-shop-2"), SHOP)
    assert again.kept == [] and again.dropped == {"duplicate": 1}
    (dropped,) = [c for c in ledger.list_candidates(status="dropped") if c.session == "s-shop-2"]
    assert dropped.duplicate_of == rel and dropped.drop_reason == "duplicate"


def test_a_global_memory_still_dedups_every_project(config: Config, ledger: Ledger) -> None:
    rel = accept_in(config, ledger, SHOP, "s-shop-1", scope="global")
    assert "/" not in rel  # top level
    for sid, scope in (("s-acme-1", None), ("s-acme-2", "global")):
        report = run(config, ledger, session(config, ACME, sid), ACME, scope=scope)
        assert report.kept == [] and report.dropped == {"duplicate": 1}, (scope, report.to_json())


def test_scope_in_frontmatter_overrides_the_folder(config: Config, ledger: Ledger) -> None:
    # under another project's folder but declared global: dedups everywhere
    topic(config, "projects/home-kim-shop/pipeline.md", CLAIM, "scope: global\n")
    report = run(config, ledger, session(config, ACME, "s-acme-1"), ACME)
    assert report.kept == [] and report.dropped == {"duplicate": 1}

    # at the top level but declared for another project: shown beside, not a duplicate
    (config.memory / "projects/home-kim-shop/pipeline.md").unlink()
    topic(config, "actions-pinning.md", CLAIM_2, f"scope: {SHOP}\n")
    report = run(
        config, ledger, session(config, ACME, "s-acme-2", SAID_2), ACME, claim=CLAIM_2, quote=QUOTE_2
    )
    assert len(report.kept) == 1 and report.related == 1
    assert report.kept[0].duplicate_of == "actions-pinning.md"
    # ... and in that project it is a duplicate
    report = run(
        config, ledger, session(config, SHOP, "s-shop-2", SAID_2), SHOP, claim=CLAIM_2, quote=QUOTE_2
    )
    assert report.kept == [] and report.dropped == {"duplicate": 1}


def test_a_global_candidate_matching_another_projects_memory_is_a_suspect_not_dropped(
    config: Config, ledger: Ledger
) -> None:
    rel = accept_in(config, ledger, SHOP, "s-shop-1")
    report = run(config, ledger, session(config, ACME, "s-acme-1"), ACME, scope="global")
    (kept,) = report.kept
    assert kept.scope == "global" and kept.status == "pending" and kept.duplicate_of == rel
    assert report.suspected_duplicates == 1 and report.related == 1 and report.duplicates == 0


def test_a_project_index_line_linking_its_own_folder_counts_for_that_project(
    config: Config, ledger: Ledger
) -> None:
    folder = config.memory / "projects" / "home-kim-shop"
    topic(config, "projects/home-kim-shop/pipeline.md", "Deploy notes.")
    (folder / "MEMORY.md").write_text(
        f"- [{CLAIM}](pipeline.md) — laptops are not logged\n", encoding="utf-8"
    )
    report = run(config, ledger, session(config, ACME, "s-acme-1"), ACME)
    assert len(report.kept) == 1 and report.related == 1
    report = run(config, ledger, session(config, SHOP, "s-shop-1"), SHOP)
    assert report.kept == [] and report.dropped == {"duplicate": 1}


def test_another_projects_pending_lesson_is_neither_a_duplicate_nor_corroborated(
    config: Config, ledger: Ledger
) -> None:
    index = DedupIndex.build(config.memory, ledger)  # one index across sessions, as a dream cycle does
    shop = run(config, ledger, session(config, SHOP, "s-shop-1"), SHOP, index=index)
    acme = run(config, ledger, session(config, ACME, "s-acme-1"), ACME, index=index)
    assert len(shop.kept) == 1 and len(acme.kept) == 1 and acme.corroborated == []
    assert acme.kept[0].duplicate_kind == "pending" and acme.kept[0].duplicate_of == shop.kept[0].id
    assert ledger.get_candidate(shop.kept[0].id).corroborated == 0

    # a pending *global* lesson from another project does cover this project: dropped, corroborated
    glob = run(
        config,
        ledger,
        session(config, SHOP, "s-shop-2", SAID_2),
        SHOP,
        scope="global",
        claim=CLAIM_2,
        quote=QUOTE_2,
        index=index,
    )
    again = run(
        config,
        ledger,
        session(config, ACME, "s-acme-2", SAID_2),
        ACME,
        claim=CLAIM_2,
        quote=QUOTE_2,
        index=index,
    )
    assert again.kept == [] and again.dropped == {"duplicate-pending": 1}
    assert again.corroborated == [glob.kept[0].id]
    assert ledger.get_candidate(glob.kept[0].id).corroborated == 1


def test_a_rejection_in_one_project_does_not_silence_the_lesson_in_another(
    config: Config, ledger: Ledger
) -> None:
    # the same session file copied into two projects: the old gate dropped the second as previously rejected
    shop = run(config, ledger, session(config, SHOP, "s1"), SHOP)
    decisions.reject(ledger, shop.kept[0].id, "too specific", "only matters for the shop")

    here = run(config, ledger, session(config, SHOP, "s1"), SHOP, claim=CLAIM + " Always.")
    assert here.kept == [] and here.dropped == {"previously-rejected": 1}  # same project: still silenced

    # (an identical claim would have the rejected one's id: ids are session + quote + claim)
    there = run(config, ledger, session(config, ACME, "s1"), ACME, claim=CLAIM + " Really.")
    (kept,) = there.kept
    assert kept.status == "pending" and there.dropped == {}
    assert kept.duplicate_kind != "rejected" and kept.duplicate_of is None
    elsewhere = run(config, ledger, session(config, ACME, "s-acme-2"), ACME, claim=CLAIM + " Please.")
    assert elsewhere.dropped == {"duplicate-pending": 1}  # it dedups against ACME's own pending one


def test_scopes_and_closest_in_scope_for_callers_outside_the_gate(config: Config, ledger: Ledger) -> None:
    topic(config, "projects/home-kim-shop/pipeline.md", CLAIM)
    topic(config, "actions.md", CLAIM_2)
    scopes = Scopes(config.memory, ledger)
    assert scopes.of_memory("projects/home-kim-shop/pipeline.md") == "home-kim-shop"
    assert scopes.of_memory("actions.md") is None and scopes.of_memory("MEMORY.md:3") is None
    index = DedupIndex.build(config.memory, ledger)
    other = closest_in_scope(index, CLAIM, project=ACME, memory_dir=config.memory)
    assert other is None or other.score < SUSPECT  # another project's memory is not this one's
    hit = closest_in_scope(index, CLAIM, project=SHOP, memory_dir=config.memory)
    assert hit is not None and hit.ref == "projects/home-kim-shop/pipeline.md" and hit.score >= DUPLICATE
    hit = closest_in_scope(index, CLAIM_2, project=ACME, memory_dir=config.memory)
    assert hit is not None and hit.ref == "actions.md"


def test_ten_projects_whose_sessions_share_a_file_name_keep_all_ten_lessons(
    config: Config, ledger: Ledger
) -> None:
    """Ten project folders, each with an ``s.jsonl`` saying the same lesson for its own project: each
    project keeps its own pending lesson (a session is named by project and session, never by its
    file name alone)."""
    projects = [f"-home-kim-app{n}" for n in range(10)]
    index = DedupIndex.build(config.memory, ledger)  # one index across the sessions, as a cycle has
    for project in projects:
        report = run(config, ledger, session(config, project, "s"), project, index=index)
        assert report.dropped == {} and len(report.kept) == 1, (project, report.to_json())
    pending = ledger.list_candidates(status="pending")
    assert sorted(c.project for c in pending) == projects
    assert {c.scope for c in pending} == set(projects) and len({c.id for c in pending}) == 10
    assert ledger.list_candidates(status="dropped") == []


def test_a_global_lesson_from_another_projects_alike_named_session_corroborates_it(
    config: Config, ledger: Ledger
) -> None:
    """The same global lesson from ``s.jsonl`` of two projects: the second is a duplicate of the first
    and corroborates it (another session, though its file has the same name), once."""
    first = run(config, ledger, session(config, ACME, "s"), ACME, scope="global")
    (kept,) = first.kept
    again = run(config, ledger, session(config, SHOP, "s"), SHOP, scope="global")
    assert again.kept == [] and again.dropped == {"duplicate-pending": 1}
    assert again.corroborated == [kept.id]
    stored = ledger.get_candidate(kept.id)
    assert stored is not None and stored.corroborated == 1
    twice = run(config, ledger, session(config, SHOP, "s"), SHOP, scope="global")  # the same session again
    assert twice.corroborated == []
    stored = ledger.get_candidate(kept.id)
    assert stored is not None and stored.corroborated == 1
