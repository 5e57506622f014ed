"""How long the promotion gates, the banner, normalize and auto-write take on a grown memory repo.

Run: ``python3 tests/bench/bench_promotion.py [accepts] [bulk_rejects]`` (defaults 100 and 2000; MEMORY.md fills up near 110).
Accepts go through the real ``decisions.accept`` (one git commit each); rejects are bulk-inserted.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.dream import promotion
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions
from dreamtui.core.memory.normalize import plan_normalize
from dreamtui.core.models import Candidate, Match, candidate_id

START = datetime(2026, 9, 1, 9, 0, 0)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def candidate(n: int, when: datetime) -> Candidate:
    claim = f"Lesson {n}: prefer the small explicit step when touching module {n % 97} of the service"
    quote = f"please keep step {n} small"
    return Candidate(
        id=candidate_id(f"s{n}", quote, claim),
        session=f"s{n}",
        project="proj",
        transcript=f"/t/s{n}.jsonl",
        claim=claim,
        why="Smaller steps are easier to review.",
        how_to_apply="Split the change.",
        type="feedback",
        scope="global",
        quote=quote,
        extractor="heuristic",
        model=None,
        provenance="person",
        matches=[Match(f"/t/s{n}.jsonl", 3, f"u{n}", iso(when), "person")],
        created_at=iso(when),
        updated_at=iso(when),
    )


def timed(label: str, func, repeat: int = 3):
    best = float("inf")
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - t0)
    print(f"{label:<44} {best * 1000:8.1f} ms")
    return result


def main() -> None:
    accepts = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rejects = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    root = Path(tempfile.mkdtemp(prefix="bench-promotion-"))
    cfg = Config(transcripts=root / "t", memory=root / "m", state=root / "s", extractor="heuristic")
    led = Ledger.open(cfg.state)
    t0 = time.perf_counter()
    for i in range(accepts):
        when = START + timedelta(days=40) * i / accepts
        os.environ["DREAMTUI_NOW"] = iso(when)
        cand = candidate(i, when)
        led.put_candidate(cand)
        decisions.accept(cfg, led, cand.id)
    print(f"{accepts} real accepts: {time.perf_counter() - t0:.1f} s")
    with led.write() as c:
        for i in range(rejects):
            cand = candidate(100_000 + i, START)
            led.put_candidate(cand)
            c.execute(
                "INSERT INTO decisions (candidate_id, action, decided_by, extractor, decided_at) "
                "VALUES (?, 'reject', 'person', 'heuristic', ?)",
                (cand.id, iso(START)),
            )
            c.execute("UPDATE candidates SET status = 'rejected' WHERE id = ?", (cand.id,))
        for d in range(7):
            c.execute(
                "INSERT INTO dream_cycles (chat_id, date, status, started_at) VALUES ('p', ?, 'completed', ?)",
                (f"2026-10-{d + 1:02d}", iso(START + timedelta(days=30 + d))),
            )
    os.environ["DREAMTUI_NOW"] = iso(START + timedelta(days=45))
    pair = promotion.choose_pair(led)
    gates = timed("compute_gates (all three)", lambda: promotion.compute_gates(cfg, led, pair))
    for gate in gates:
        print(f"  {gate.title}: {'pass' if gate.passed else 'FAIL'}: {gate.summary}")
    timed("  evidence gate", lambda: promotion.evidence_gate(led, pair))
    timed("  stable ledger gate", lambda: promotion.stable_ledger_gate(cfg, led))
    timed("  schema gate", lambda: promotion.schema_gate(cfg))
    timed("plan_normalize", lambda: plan_normalize(cfg))
    timed(
        "promotion_banner(check=False), none approved",
        lambda: promotion.promotion_banner(cfg, led, check=False),
    )
    with led.write() as c:  # approve without the gates (the bench's evidence rate is low on purpose)
        c.execute(
            "INSERT INTO promotions (extractor, model, status, approved_at) VALUES ('heuristic', NULL, "
            "'approved', ?)",
            (iso(START + timedelta(days=45)),),
        )
    timed("promotion_banner(check=False), active", lambda: promotion.promotion_banner(cfg, led, check=False))
    timed("promotion_status (demotes: rate is low)", lambda: promotion.promotion_status(cfg, led), repeat=1)
    print(f"files: {len(list(Path(cfg.memory).glob('*.md')))}, root: {root}")


if __name__ == "__main__":
    main()
