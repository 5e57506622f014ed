"""The first-run estimate on a synthetic 2 GB history: how fast it appears, and how close it is to the
tokens the dream then sends.

Run:  python3 tests/bench/bench_estimate.py [--mb 2000] [--corpus ../shared/corpus/projects]

The history is built in a temporary folder (deleted afterwards) from the real Claude Code sessions of
``--corpus``: each synthetic session is a real session cut at a random line (30–100% of it, seeded), its
sub-agent files beside it, under a new session id, in one of 40 project folders, last written on a
random day of the last 20 (so about a third lies outside the 14-day window and waits for a back-fill).

Then:

1. the estimate (:func:`~dreamtui.core.dream.estimate.estimate_dream`, the recent window, no network)
   is timed;
2. the dream runs with the ``anthropic`` extractor (the real SDK over HTTP) against the local fake
   Messages API as a **recording stand-in model**: it answers every request with no lessons and reports
   ``usage.input_tokens`` by a counting rule (``fakes.anthropic_server.counted_input_tokens``: the
   characters of the system prompt, the messages and the output schema over 4). "Tokens sent" is that
   count summed over the extraction requests the stand-in received (the ledger records the same figure).
   The counting rule is the estimate's own characters-per-token, so the comparison measures what the
   estimate has to guess (which sessions are sent, how big their digests are, how they split), not a
   tokenizer: with an API key, ``client.messages.count_tokens`` gives the real count of one request.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fakes.anthropic_server import FakeAnthropic, counted_input_tokens, counting  # noqa: E402

from dreamtui.core.config import Config  # noqa: E402
from dreamtui.core.dream.estimate import estimate_dream, window_start  # noqa: E402
from dreamtui.core.dream.run import run_cycle  # noqa: E402
from dreamtui.core.ledger import Ledger  # noqa: E402

DAY = 86_400


def sources(corpus: Path) -> list[tuple[list[bytes], Path | None]]:
    """Every main session of the corpus: its lines, and its sub-agent folder (None when it has none)."""
    out = []
    for project in sorted(p for p in corpus.iterdir() if p.is_dir()):
        for main in sorted(project.glob("*.jsonl")):
            lines = main.read_bytes().splitlines(keepends=True)
            sub = main.with_suffix("") / "subagents"
            if lines:
                out.append((lines, sub if sub.is_dir() else None))
    return out


def build(corpus: Path, root: Path, target: int, seed: int = 33) -> tuple[int, int]:
    """Write sessions until ``target`` bytes; returns (sessions, bytes)."""
    rng = random.Random(seed)
    pool = sources(corpus)
    now = time.time()
    total = n = 0
    while total < target:
        lines, sub = pool[n % len(pool)]
        keep = max(1, int(len(lines) * rng.uniform(0.3, 1.0)))
        project = root / f"-home-bench-p{n % 40:02d}"
        project.mkdir(exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        main = project / f"{sid}.jsonl"
        data = b"".join(lines[:keep])
        main.write_bytes(data)
        total += len(data)
        written = now - rng.uniform(0.5, 20.0) * DAY
        paths = [main]
        if sub is not None:
            dest = project / sid / "subagents"
            shutil.copytree(sub, dest)
            for f in dest.glob("*.jsonl"):
                total += f.stat().st_size
                paths.append(f)
        for p in paths:
            os.utime(p, (written, written))
        n += 1
    return n, total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=2000)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "projects")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    os.environ.pop("DREAMTUI_NOW", None)
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        os.environ.setdefault(var, "bench")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        os.environ.setdefault(var, "bench@localhost")
    with tempfile.TemporaryDirectory(prefix="dreamtui-bench-estimate-") as tmp:
        base = Path(tmp)
        root = base / "transcripts"
        root.mkdir()
        t = time.perf_counter()
        sessions, size = build(args.corpus, root, args.mb * 1_000_000)
        built = time.perf_counter() - t
        print(f"history: {sessions} sessions, {size / 1e6:,.0f} MB in {root} (built in {built:.0f} s)")
        config = Config(
            transcripts=root,
            memory=base / "memory",
            state=base / "state",
            extractor="anthropic",
            concurrency=args.concurrency,
            dedup_judge="off",
        )
        ledger = Ledger.open(config.state)
        since = window_start(config)
        t = time.perf_counter()
        est = estimate_dream(
            config, ledger, since=since, extractor="anthropic", model=config.model, priced=True
        )
        took = time.perf_counter() - t
        print(f"estimate: {took:.2f} s (page cache warm: the files were just written)")
        for line in est.lines():
            print(f"  {line}")
        with FakeAnthropic() as server:
            server.responder = counting()
            os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
            os.environ["ANTHROPIC_BASE_URL"] = server.url
            t = time.perf_counter()
            record = run_cycle(config, ledger)
            ran = time.perf_counter() - t
            extraction = [r for r in server.calls() if "extraction step" in json.dumps(r.body.get("system"))]
            sent = sum(counted_input_tokens(r.body) for r in extraction)
        recorded = ledger.one("SELECT SUM(input_tokens) FROM extractions")[0]
        ledger.close()
        s = record.stats
        print(
            f"dream: {ran:.0f} s, {s.sessions_new} sessions read ({s.sessions_older} older left for a "
            f"back-fill), {s.sparks} sent in {len(extraction)} requests; {s.sessions_quiet} too quiet"
        )
        print(
            f"tokens sent (the stand-in's count of the extraction requests): {sent:,} (ledger: {recorded:,})"
        )
        print(f"estimate / sent: {est.tokens / max(1, sent):.3f} (calls {est.calls:,} / {len(extraction):,})")


if __name__ == "__main__":
    main()
