"""Score an extractor on the real evaluation set: what would reach a person's queue, against blind labels.

Run from the repository root:

    python3 tests/bench/measure_extract.py --extractor heuristic --split tuning [-v]
    python3 tests/bench/measure_extract.py --extractor recorded --tag v4 --split blind3
    ANTHROPIC_API_KEY=... python3 tests/bench/measure_extract.py --live --split blind   # a live API run

Every session goes through the real pipeline: digest, the extractor, then the real gate (verification,
dedup within the session, secret scan) with an empty memory repository and a fresh ledger, so what is
scored is what the queue would show. ``recorded`` replays a Claude model's recorded answers to the exact
requests dreamtui sends (``tests/data/real_eval/recorded/<tag>/``) through the real anthropic SDK
against the local fake Messages API; ``--live`` sends the same requests to the real API.

Figures: precision (kept proposals that state a keep or marginal lesson of the same session, one
proposal per lesson), keep-recall (keep lessons stated by some kept proposal), duplicates (kept
proposals repeating a lesson another proposal already states), and quote survival (quotes that pass
verification, of all the candidates the extractor returned). Tune on ``tuning``; ``blind`` is only measured.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from fakes.eval_set import (  # noqa: E402
    EvalSession,
    Proposal,
    SessionScore,
    Totals,
    load_recorded,
    load_sessions,
    location_names,
    portable_key,
    request_key,
    score_session,
)

from dreamtui.core.config import Config  # noqa: E402
from dreamtui.core.extract.base import ExtractContext, Extractor  # noqa: E402
from dreamtui.core.ingest.digest import digest_session  # noqa: E402
from dreamtui.core.ledger import Ledger  # noqa: E402


def run_session(session: EvalSession, extractor: Extractor, workdir: Path) -> SessionScore | None:
    """Digest, extract, gate (fresh ledger, empty memory) and score one session (None: the extractor failed)."""
    from dreamtui.core.errors import ExtractorError
    from dreamtui.core.gate.pipeline import gate

    digest = digest_session(session.files)
    CURRENT["names"] = location_names(digest)
    config = Config(
        transcripts=workdir / "t",
        memory=workdir / session.id / "memory",
        state=workdir / session.id / "state",
        extractor="heuristic",
        dedup_judge="off",
    )
    try:
        result = extractor.extract(digest, ExtractContext(project=digest.project))
    except ExtractorError as exc:
        print(f"{session.id} [{session.split}] not scored: {exc}")
        return None
    if result.error:
        print(f"{session.id} [{session.split}] not scored: {result.error}")
        return None
    ledger = Ledger.open(config.state)
    try:
        report = gate(
            result.candidates,
            config=config,
            ledger=ledger,
            project=digest.project,
            files=session.files,
            judge=None,
        )
    finally:
        ledger.close()
    proposed = len(result.candidates) + result.malformed
    unverified = report.dropped.get("unverified", 0) + report.dropped.get("invalid", 0)
    proposals = [
        Proposal(
            claim=c.claim,
            quote=c.quote,
            line=c.verified_line,
            file=c.matches[0].file if c.matches else None,
            kept=True,
        )
        for c in report.kept
    ]
    return score_session(
        session.id,
        proposals,
        session.labels or [],
        proposed=proposed,
        verified=len(result.candidates) - unverified,
    )


CURRENT: dict[str, list[str]] = {"names": []}
"""Where the session being scored lies (its location names), for a recording made elsewhere."""
SENT = {"calls": 0, "chars": 0}
"""What the recorded run sent: calls and characters of system prompt plus user message."""
CHARS_PER_TOKEN = 3.5
"""An estimate for English-heavy transcripts (no tokenizer offline): input tokens ~ characters / 3.5."""


def recorded_extractor(tag: str, stack: list, root: Path | None = None) -> Extractor:
    """The anthropic extractor, its requests answered from the recording (``root/<tag>``, by default
    ``tests/data/real_eval/recorded/<tag>``) by the local fake API."""
    from fakes.anthropic_server import FakeAnthropic, Reply, error, message

    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor

    answers = load_recorded(tag) if root is None else load_recorded(tag, root)
    fake = FakeAnthropic()

    def respond(body: dict) -> Reply:
        system = "".join(b.get("text", "") for b in body.get("system", []) if isinstance(b, dict))
        user = "".join(str(m.get("content", "")) for m in body.get("messages", []))
        SENT["calls"] += 1
        SENT["chars"] += len(system) + len(user)
        text = answers.get(request_key(body)) or answers.get(portable_key(body, CURRENT["names"]))
        if text is None:
            return error(
                400, "invalid_request_error", "no recorded answer for this request", retry_after_ms=None
            )
        return Reply(200, message(text, input_tokens=0, output_tokens=0, cache_read=0))

    fake.responder = respond
    stack.append(fake.__enter__())
    return AnthropicExtractor(model="claude-sonnet-5-5", api_key="recorded", base_url=fake.url, max_retries=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extractor", choices=["heuristic", "recorded", "command"], default="heuristic")
    ap.add_argument("--live", action="store_true", help="the anthropic extractor against the real API")
    ap.add_argument(
        "--tag", default="v4", help="which recording to replay (tests/data/real_eval/recorded/TAG)"
    )
    ap.add_argument(
        "--split",
        choices=["tuning", "blind", "blind2", "blind3", "long", "blind4", "agents", "all"],
        default="tuning",
    )
    ap.add_argument("--command", help="the command for --extractor command")
    ap.add_argument("-v", "--verbose", action="store_true", help="every hit, noise and miss")
    args = ap.parse_args()

    sessions = load_sessions(args.split)
    if not sessions:
        sys.exit(
            "no labelled session of this split is on this machine (see tests/data/real_eval/manifest.json: "
            "the transcripts live in ../shared/corpus and ../eval)"
        )
    stack: list = []
    if args.live:
        from dreamtui.core.extract.anthropic_ext import AnthropicExtractor

        if not os.environ.get("ANTHROPIC_API_KEY"):
            sys.exit("--live needs ANTHROPIC_API_KEY")
        extractor: Extractor = AnthropicExtractor(model=os.environ.get("DREAMTUI_MODEL", "claude-sonnet-5-5"))
        name = f"anthropic live ({extractor.model})"
    elif args.extractor == "recorded":
        extractor = recorded_extractor(args.tag, stack)
        name = f"anthropic, recorded answers '{args.tag}' replayed through the SDK"
    elif args.extractor == "command":
        from dreamtui.core.extract.command import CommandExtractor

        extractor = CommandExtractor(tuple(args.command.split()), timeout=300)
        name = f"command {args.command}"
    else:
        from dreamtui.core.extract.heuristic import HeuristicExtractor

        extractor = HeuristicExtractor()
        name = "heuristic"
    totals = Totals()
    by_format: dict[str, Totals] = {}
    skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for s in sessions:
            sc = run_session(s, extractor, Path(tmp))
            if sc is None:
                skipped += 1
                continue
            totals.add(sc)
            by_format.setdefault(s.format, Totals()).add(sc)
            print(
                f"{s.id} [{s.split}, {s.format}] kept {sc.kept:>2}  precise {sc.precise:>2}  dup {sc.duplicates}  "
                f"keep {sc.keep_found}/{sc.keep_labels}  verified {sc.verified}/{sc.proposed}"
            )
            if args.verbose:
                for claim, label in sc.hits:
                    print(f"    hit:   {claim[:110]}\n           = {label[:110]}")
                for claim in sc.noise:
                    print(f"    noise: {claim[:110]}")
                for claim in sc.missed:
                    print(f"    miss:  {claim[:110]}")
    for fake in stack:
        fake.__exit__(None, None, None)
    print(
        f"\n{name} on the {args.split} split: {totals.sessions} sessions, {totals.keep_labels} keep lessons"
        + (f" ({skipped} not scored)" if skipped else "")
    )
    print(f"  precision   {totals.precision:.2f}  ({totals.precise}/{totals.kept} kept proposals)")
    print(f"  keep-recall {totals.keep_recall:.2f}  ({totals.keep_found}/{totals.keep_labels})")
    print(f"  duplicates  {totals.duplicates}")
    print(f"  quotes verified {totals.survival:.1%}  ({totals.verified}/{totals.proposed})")
    if len(by_format) > 1 or args.split == "agents":
        print("  by format:")
        for fmt, t in sorted(by_format.items()):
            print(
                f"    {fmt:<12} {t.sessions:>3} sessions  precision {t.precision:.2f} ({t.precise}/{t.kept})  "
                f"keep-recall {t.keep_recall:.2f} ({t.keep_found}/{t.keep_labels})  duplicates {t.duplicates}  "
                f"verified {t.verified}/{t.proposed}"
            )
    if SENT["calls"]:
        from dreamtui.core.ingest.formats.protocol import split_address

        # a session inside a database is an address (<db>#<session>): the database file's size counts once
        files = {split_address(f)[0] for s in sessions for f in s.files}
        mb = sum(f.stat().st_size for f in files) / 1e6
        tokens = SENT["chars"] / CHARS_PER_TOKEN
        print(
            f"  sent {SENT['calls']} requests, {SENT['chars']:,} characters for {mb:.1f} MB of transcript: "
            f"~{tokens / max(mb, 1e-9):,.0f} input tokens per MB, ~{tokens / max(totals.kept, 1):,.0f} per kept "
            f"proposal (estimated at {CHARS_PER_TOKEN} characters a token)"
        )


if __name__ == "__main__":
    main()
