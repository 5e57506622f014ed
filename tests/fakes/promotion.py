"""A month of real decisions and cycles for the promotion tests (the gate reads them through the real API)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dreamtui.core.config import Config
from dreamtui.core.dream.promotion import Pair
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Candidate, Match, candidate_id

START = datetime(2026, 9, 1, 9, 0, 0)


HEUR = Pair("heuristic", None)


CLAUDE = Pair("anthropic", "claude-sonnet-5-5")


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_candidate(
    n: int,
    pair: Pair = HEUR,
    *,
    provenance: str = "person",
    duplicate_of: str | None = None,
    secrets: list[str] | None = None,
    created: datetime = START,
    claim: str | None = None,
) -> Candidate:
    claim = claim or f"Lesson number {n}: always run the focused test file before the whole suite"
    quote = f"please run the focused tests first, number {n}"
    return Candidate(
        id=candidate_id(f"s{n}", quote, claim),
        session=f"s{n}",
        project="proj",
        transcript=f"/t/proj/s{n}.jsonl",
        claim=claim,
        why="It is faster.",
        how_to_apply="Run tests/test_x.py before pytest -q.",
        type="feedback",
        scope="global",
        quote=quote,
        extractor=pair.extractor,
        model=pair.model,
        status="pending",
        provenance=provenance,
        matches=[
            Match(
                file=f"/t/proj/s{n}.jsonl",
                line=3,
                uuid=f"u{n}",
                timestamp=iso(created),
                provenance=provenance,
            )
        ],
        duplicate_of=duplicate_of,
        secrets=secrets or [],
        created_at=iso(created),
        updated_at=iso(created),
    )


def insert_decision(
    ledger: Ledger,
    cand: Candidate,
    action: str,
    when: datetime,
    *,
    by: str = "person",
    undone: int = 0,
    with_pair: bool = True,
) -> None:
    """Bulk history straight into the ledger (the only practical way to lay down 30+ days)."""
    with ledger.write() as c:
        c.execute(
            "INSERT INTO decisions (candidate_id, action, decided_by, extractor, model, type, undone, decided_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cand.id,
                action,
                by,
                cand.extractor if with_pair else None,
                cand.model if with_pair else None,
                cand.type,
                undone,
                iso(when),
            ),
        )
        status = {"accept": "accepted", "reject": "rejected"}.get(action)
        if status and not undone:
            c.execute("UPDATE candidates SET status = ? WHERE id = ?", (status, cand.id))


def seed_history(
    ledger: Ledger,
    *,
    decisions: int = 50,
    accepts: int = 42,
    days: float = 31,
    pair: Pair = HEUR,
    offset: int = 0,
) -> None:
    """``decisions`` human decisions for ``pair`` spread evenly over ``days`` from START."""
    step = timedelta(days=days) / max(decisions - 1, 1)
    for i in range(decisions):
        cand = make_candidate(offset + i, pair)
        ledger.put_candidate(cand)
        insert_decision(ledger, cand, "accept" if i < accepts else "reject", START + step * i)


def seed_cycles(ledger: Ledger, statuses: list[str], start: datetime = START) -> None:
    """Dream cycles, oldest first, one per day."""
    with ledger.write() as c:
        for i, status in enumerate(statuses):
            day = start + timedelta(days=i)
            c.execute(
                "INSERT INTO dream_cycles (chat_id, date, status, started_at, completed_at, error_message)"
                " VALUES ('proj', ?, ?, ?, ?, ?)",
                (
                    day.date().isoformat(),
                    status,
                    iso(day),
                    iso(day + timedelta(minutes=3)),
                    "extractor crashed" if status == "failed" else None,
                ),
            )


HISTORY_ACCEPTS = 42


HISTORY_REJECTS = 8


APPROVE_AT = START + timedelta(days=40)


def claim_of(n: int) -> str:
    topics = ["tests", "commits", "migrations", "logging", "retries", "caching", "naming", "reviews"]
    return f"Lesson {n} about {topics[n % len(topics)]}: prefer the small, explicit step number {n}"


_HISTORY: dict[str, Path] = {}  # one history per test run, copied for each test


def build_history(factory: pytest.TempPathFactory) -> Path:
    """31 days of human decisions (42 accepts, 8 rejects: 84%) made through ``decisions``, a clean
    memory repo, and 7 completed cycles. Built once per session (the CLI tests share it)."""
    from dreamtui.core.memory import decisions

    if "root" in _HISTORY:
        return _HISTORY["root"]
    root = factory.mktemp("history")
    cfg = world_config(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        led = Ledger.open(cfg.state)
        total = HISTORY_ACCEPTS + HISTORY_REJECTS
        for i in range(total):
            when = START + timedelta(days=31) * i / (total - 1)
            mp.setenv("DREAMTUI_NOW", iso(when))
            cand = make_candidate(i, created=when, claim=claim_of(i))
            led.put_candidate(cand)
            if i % 6 == 5 and i < 6 * HISTORY_REJECTS:
                decisions.reject(led, cand.id, "too specific", "only for that one bug")
            else:
                decisions.accept(cfg, led, cand.id)
        seed_cycles(led, ["completed"] * 7, start=START + timedelta(days=25))
        led.close()
    _HISTORY["root"] = root
    return root


def world_config(root: Path) -> Config:
    return Config(
        transcripts=root / "transcripts", memory=root / "memory", state=root / "state", extractor="heuristic"
    )


def copy_history(history: Path, dest: Path) -> Config:
    """A private copy of the history at ``dest``."""
    import shutil

    shutil.copytree(history, dest, symlinks=True)
    return world_config(dest)
