"""The one JSON serialisation of the shared dataclasses (what ``--json`` prints and the ledger stores)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from dreamtui.core.gate.pipeline import GateReport
from dreamtui.core.models import Candidate, Digest, DigestStats, Match, Turn, jsonable


def _candidate() -> Candidate:
    match = Match("s.jsonl", 7, "u1", "2026-03-01T10:00:00Z", "person")
    return Candidate(
        "c1",
        "s",
        "p",
        "s.jsonl",
        "Use uv",
        "",
        "",
        "feedback",
        "global",
        "use uv",
        "heuristic",
        None,
        matches=[match],
    )


def test_digest_json_keeps_its_printed_key_order_and_derived_values() -> None:
    digest = Digest(
        "s",
        "-home-me-proj",
        ["s.jsonl"],
        [Turn("person", "hi", "s.jsonl", 1)],
        DigestStats(bytes=200, chars=50),
        "/home/me/proj",
    )
    text = json.dumps(digest.to_json())
    assert text.startswith(
        '{"session": "s", "project": "-home-me-proj", "project_name": "proj", "cwd": "/home/me/proj"'
    )
    assert (
        '"turns": [{"role": "person", "text": "hi", "line": 1, "uuid": null, "timestamp": null, "file": "s.jsonl"'
        in text
    )
    assert '"stats": {"bytes": 200, "chars": 50, "signal_pct": 25.0, "skipped_lines": 0, "lines": 0' in text


def test_a_candidate_carries_its_matches_and_verified_line() -> None:
    data = _candidate().to_json()
    assert list(data)[-1] == "verified_line" and data["verified_line"] == 7
    assert data["matches"] == [
        {
            "file": "s.jsonl",
            "line": 7,
            "uuid": "u1",
            "timestamp": "2026-03-01T10:00:00Z",
            "provenance": "person",
            "copy": False,
        }
    ]


def test_a_gate_report_counts_invented_quotes_among_its_fields() -> None:
    report = GateReport([_candidate()], Counter({"unverified": 2}))
    data = report.to_json()
    assert list(data)[:4] == ["kept", "dropped", "duplicates", "invented"]
    assert data["invented"] == 2 and data["dropped"] == {"unverified": 2} and type(data["dropped"]) is dict
    assert data["kept"][0]["id"] == "c1"


def test_jsonable_makes_paths_tuples_and_sets_plain() -> None:
    assert jsonable({"p": Path("/a/b"), "t": (1, 2), "s": {3}}) == {"p": "/a/b", "t": [1, 2], "s": [3]}
