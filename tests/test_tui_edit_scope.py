"""The edit dialog changes claim, why, how, type and scope; the file lands where the scope says."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fakes.tui import open_queue, wait_for

from dreamtui.core.memory import decisions
from dreamtui.core.memory.decisions import DecisionError
from dreamtui.core.memory.frontmatter import parse as parse_frontmatter
from dreamtui.tui.screens.modals import EditModal


def status_of_helper(ledger, cid: str) -> str:
    return ledger.get_candidate(cid).status


def accepted_path(ledger, cid: str) -> str:
    return ledger.query(
        "SELECT memory_path FROM decisions WHERE action = 'accept' AND candidate_id = ?", (cid,)
    )[0]["memory_path"]


async def choose(pilot, app, select_id: str, value: str) -> None:
    select = app.screen.query_one(f"#{select_id}")
    select.value = value
    await pilot.pause()


async def test_a_project_proposal_made_global_lands_at_the_top_as_the_chosen_type(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    cid = ids[1]  # "Always run alembic upgrade head …", proposed for payments-api
    async with open_queue(cfg, ledger, len(ids), at=cid) as (app, pilot, _table):
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditModal))
        await choose(pilot, app, "scope", "global")
        await choose(pilot, app, "type", "reference")
        app.screen.query_one("#why").load_text("Applied migrations must not be edited.")
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: app.decisions_waiting == 0 and status_of_helper(ledger, cid) == "accepted"
        )
    path = accepted_path(ledger, cid)
    assert "/" not in path  # the top of the memory repo
    meta, body = parse_frontmatter((cfg.memory / path).read_text())
    assert meta["type"] == "reference" and "Applied migrations must not be edited." in body


async def test_a_global_proposal_made_project_specific_lands_under_projects(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    cid = ids[1]
    ledger.put_candidate(
        replace(ledger.get_candidate(cid), scope="global")
    )  # an "Always …" the gate made global
    async with open_queue(cfg, ledger, len(ids), at=cid) as (app, pilot, _table):
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditModal))
        assert app.screen.query_one("#scope").value == "global"
        await choose(pilot, app, "scope", "project")
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: app.decisions_waiting == 0 and status_of_helper(ledger, cid) == "accepted"
        )
    assert accepted_path(ledger, cid).startswith("projects/home-kim-src-payments-api/")


def test_a_scope_that_is_neither_global_nor_the_project_is_refused(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    with pytest.raises(DecisionError, match="neither global nor"):
        decisions.accept(cfg, ledger, ids[1], edits={"scope": "-some-other-project"})
    with pytest.raises(DecisionError, match="is not one of"):
        decisions.accept(cfg, ledger, ids[1], edits={"type": "gossip"})
    assert status_of_helper(ledger, ids[1]) == "pending"
