"""Digest benchmark of the Gemini CLI and Copilot CLI formats: the digest against ``orjson`` reading the
same file (the whole document for a Gemini ``.json`` chat, every line for a JSON-lines file).

Run:  python3 tests/bench/bench_agent_formats.py [--scale-mb 20] [--reps 5]

Each fixture of ``tests/fixtures/agents/{gemini,copilot}`` (and the real older Copilot CLI documents in
``$DREAMTUI_COPILOT_HISTORY_REAL``, when set) is grown to about ``--scale-mb`` MB by
repeating its messages (ids made unique per copy) in a temporary folder, then digested the way
dreamtui reads the format (a Gemini chat, in a ``<project>/chats/`` folder as Gemini CLI keeps it,
through ``digest_file``; a Copilot log through its line digester). Prints per file: MB, the orjson time, the digest time and the ratio digest / orjson (the
target: within 2x), CPU time, best of ``--reps``, the two interleaved. Nothing is written outside the
temporary folder.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dreamtui.core.ingest.digest import DigestState, digest_file  # noqa: E402
from dreamtui.core.ingest.formats import copilot  # noqa: E402
from dreamtui.core.models import DigestStats, Turn  # noqa: E402

FIX = REPO / "tests" / "fixtures" / "agents"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def grown_document(src: Path, dest: Path, target: int) -> Path:
    """A Gemini ``.json`` chat whose messages are the source's repeated (ids unique) to ``target`` bytes."""
    doc = json.loads(src.read_bytes())
    base = doc["messages"]
    size = len(src.read_bytes())
    copies = max(1, target // max(size, 1))
    doc["messages"] = [{**m, "id": f"{m.get('id', 'm')}-{c}"} for c in range(copies) for m in base]
    out = dest / src.name
    out.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return out


def grown_lines(src: Path, dest: Path, target: int) -> Path:
    """A JSON-lines file whose lines are the source's repeated, every uuid made unique per copy."""
    text = src.read_text(encoding="utf-8")
    copies = max(1, target // max(len(text.encode()), 1))
    out = dest / src.name
    with out.open("w", encoding="utf-8") as fh:
        for c in range(copies):
            fh.write(UUID.sub(lambda m: m.group(0)[:-6] + f"{c:06x}", text))  # noqa: B023
    return out


def as_json_lines(src: Path, dest: Path, target: int) -> Path:
    """A real ``.json`` chat written as Gemini CLI's recording service appends JSON lines (a header,
    each message, a ``$set`` of the time after it, a reply written again with its tokens and again
    with its tool calls), its messages repeated (ids unique) to ``target`` bytes."""
    doc = json.loads(src.read_bytes())
    header = {k: v for k, v in doc.items() if k != "messages"}
    out = dest / (src.stem + ".jsonl")
    size, copy = 0, 0
    with out.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n")
        while size < target:
            for m in doc["messages"]:
                m = {**m, "id": f"{m.get('id', 'm')}-{copy}"}
                versions = [m]
                if m.get("type") == "gemini":
                    first = {k: v for k, v in m.items() if k not in ("tokens", "toolCalls")}
                    with_tokens = {k: v for k, v in m.items() if k != "toolCalls"}
                    versions = [first, with_tokens, m] if m.get("toolCalls") else [first, m]
                for v in versions:
                    line = json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n"
                    line += (
                        json.dumps({"$set": {"lastUpdated": m.get("timestamp")}}, separators=(",", ":"))
                        + "\n"
                    )
                    fh.write(line)
                    size += len(line.encode())
            copy += 1
    return out


def grown_history(src: Path, dest: Path, target: int) -> Path:
    """An older Copilot CLI session document (``history-session-state/session_<id>_<ms>.json``) whose
    timeline items and chat messages are the source's repeated (timeline ids unique) to ``target`` bytes,
    written as Copilot CLI wrote it (``JSON.stringify(session, null, 2)``)."""
    doc = json.loads(src.read_bytes())
    copies = max(1, target // max(src.stat().st_size, 1))
    timeline, chat = doc["timeline"], doc["chatMessages"]
    doc["timeline"] = [{**t, "id": f"{t.get('id', 't')}-{c}"} for c in range(copies) for t in timeline]
    doc["chatMessages"] = [m for _c in range(copies) for m in chat]
    folder = dest.parent / "history-session-state"
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / src.name
    out.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return out


def cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def orjson_document(path: Path) -> None:
    orjson.loads(path.read_bytes())


def orjson_lines(path: Path) -> None:
    for line in io.BytesIO(path.read_bytes()):
        orjson.loads(line)


def digest_file_turns(path: Path) -> list[Turn]:
    """The file digested as dreamtui digests it (``digest_file``: described, then a Gemini chat's fast path of
    ``gemini.digest_records`` for JSON lines, the records for a document)."""
    return digest_file(path).turns


def digest_copilot(path: Path) -> list[Turn]:
    out: list[Turn] = []
    data = path.read_bytes()
    d = copilot.digester(str(path), "main", DigestState(), DigestStats(), True)
    lines = io.BytesIO(data).readlines()
    d.lines(range(1, len(lines) + 1), lines, out, data.isascii())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale-mb", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    target = args.scale_mb * 1024 * 1024
    gem = FIX / "gemini" / "tmp"
    cases: list[
        tuple[str, Path, Callable[[Path], object], Callable[[Path], object], Callable[..., Path]]
    ] = []
    for src in sorted(gem.rglob("session-*.json")):
        cases.append(("gemini .json", src, orjson_document, digest_file_turns, grown_document))
    for src in sorted(gem.rglob("session-*.json")):
        cases.append(("gemini .jsonl", src, orjson_lines, digest_file_turns, as_json_lines))
    for src in sorted(gem.rglob("session-*.jsonl")):
        cases.append(("gemini .jsonl*", src, orjson_lines, digest_file_turns, grown_lines))
    for src in sorted((FIX / "copilot").rglob("events.jsonl")):
        cases.append(("copilot", src, orjson_lines, digest_copilot, grown_lines))
    real = os.environ.get("DREAMTUI_COPILOT_HISTORY_REAL")  # the real files are not redistributable
    history = sorted((FIX / "copilot" / "history-session-state").glob("session_*.json"))
    history += sorted(Path(real).glob("session_*.json")) if real else []
    for src in history:
        cases.append(("copilot .json", src, orjson_document, digest_file_turns, grown_history))
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'format':<14} {'file':<44} {'MB':>6} {'orjson s':>9} {'digest s':>9} {'ratio':>6}")
        for label, src, base, dig, grow in cases:
            # where Gemini CLI keeps a chat (``<project>/chats/``), so that the file is read as one
            folder = Path(tmp) / str(len(list(Path(tmp).iterdir()))) / src.parent.parent.name / "chats"
            folder.mkdir(parents=True)
            path = grow(src, folder, target)
            turns = dig(path)
            b = d = float("inf")
            for _ in range(args.reps):
                b = min(b, cpu(lambda: base(path)))  # noqa: B023
                d = min(d, cpu(lambda: dig(path)))  # noqa: B023
            ratio = d / b if b else float("inf")
            worst = max(worst, ratio)
            mb = path.stat().st_size / 1e6
            print(
                f"{label:<14} {src.name[:44]:<44} {mb:6.1f} {b:9.3f} {d:9.3f} {ratio:6.2f}  ({len(turns)} turns)"
            )
    print(f"worst ratio digest/orjson: {worst:.2f} (target: 2.00 or less)")
    print(
        "* the JSON-lines fixture written to the description: short lines, a rewind and a checkpoint in every copy"
    )


if __name__ == "__main__":
    main()
