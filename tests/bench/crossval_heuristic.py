"""How well the offline extractor's rules generalise, estimated on the real tuning split only.

Run from the repository root (the transcripts live in ../shared and ../eval):

    python3 tests/bench/crossval_heuristic.py [-v]

Every session of the tuning split goes through the real pipeline (digest, the heuristic's scored moments,
the real gate) with NO confidence threshold, and each proposal is scored against the session's labels.
Printed:

* per session (``-v``): each proposal with its confidence, the signals behind it, the rule that found it
  and whether it states a labelled lesson;
* per rule: on how many sessions it hits and on how many it is noise. A rule that pays off on one session
  only is that session's quirk, not a rule;
* precision and keep-recall at several thresholds;
* leave-one-session-out: for each session, the threshold is chosen on the other sessions alone (the
  lowest one whose precision there is at least ``--target`` with a margin) and applied to the held-out
  session; the sum over held-out sessions estimates what the choice does on sessions nobody tuned on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from fakes.eval_set import EvalSession, Proposal, Totals, load_sessions, match_score, score_session  # noqa: E402

from dreamtui.core.config import Config  # noqa: E402
from dreamtui.core.extract.base import ExtractContext  # noqa: E402
from dreamtui.core.extract.heuristic import MIN_CONFIDENCE, HeuristicExtractor, Scored  # noqa: E402
from dreamtui.core.gate.pipeline import gate  # noqa: E402
from dreamtui.core.ingest.digest import digest_session  # noqa: E402
from dreamtui.core.ledger import Ledger  # noqa: E402

THRESHOLDS = range(-1, 8)


@dataclass
class Moment:
    """One proposal that passed the gate, with what the crossval needs to know about it."""

    session: str
    scored: Scored
    proposal: Proposal
    hit: bool


def session_moments(session: EvalSession, workdir: Path) -> list[Moment]:
    """The gated proposals of one session at no threshold, each marked hit or noise."""
    digest = digest_session(session.files)
    scored = HeuristicExtractor().scored(digest, ExtractContext(project=digest.project))
    config = Config(transcripts=workdir / "t", memory=workdir / session.id / "memory",
                    state=workdir / session.id / "state", extractor="heuristic", dedup_judge="off")
    ledger = Ledger.open(config.state)
    try:
        report = gate([m.candidate for m in scored], config=config, ledger=ledger, project=digest.project,
                      files=session.files, judge=None)
    finally:
        ledger.close()
    by_quote = {m.candidate.quote: m for m in scored}
    out = []
    for c in report.kept:
        p = Proposal(claim=c.claim, quote=c.quote, line=c.verified_line,
                     file=c.matches[0].file if c.matches else None, kept=True)
        hit = any(match_score(p, lab) > 0 for lab in session.labels or [])
        out.append(Moment(session.id, by_quote[c.quote], p, hit))
    return out


def totals_at(sessions: list[EvalSession], moments: dict[str, list[Moment]], threshold: int) -> Totals:
    """The scorer's figures when only moments at or above ``threshold`` are proposed."""
    t = Totals()
    for s in sessions:
        kept = [replace(m.proposal) for m in moments[s.id] if m.scored.confidence >= threshold]
        t.add(score_session(s.id, kept, s.labels or [], proposed=len(kept), verified=len(kept)))
    return t


def choose_threshold(sessions: list[EvalSession], moments: dict[str, list[Moment]], target: float) -> int:
    """The lowest threshold whose precision on ``sessions`` reaches ``target`` (the highest one otherwise)."""
    for th in THRESHOLDS:
        t = totals_at(sessions, moments, th)
        if t.kept and t.precision >= target:
            return th
    return max(THRESHOLDS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="every proposal of every session")
    ap.add_argument("--target", type=float, default=0.9, help="precision the threshold must reach (default 0.9: "
                    "a margin over the 0.80 goal)")
    args = ap.parse_args()
    sessions = [s for s in load_sessions("tuning") if s.labels is not None]
    if not sessions:
        sys.exit("the tuning split's transcripts are not on this machine (../shared/corpus, ../eval)")
    moments: dict[str, list[Moment]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for s in sessions:
            moments[s.id] = session_moments(s, Path(tmp))

    if args.verbose:
        for s in sessions:
            print(f"{s.id}  ({sum(1 for lab in s.labels or [] if lab.grade == 'keep')} keep lessons)")
            for m in sorted(moments[s.id], key=lambda m: -m.scored.confidence):
                mark = "HIT  " if m.hit else "noise"
                print(f"  {mark} {m.scored.confidence:>2} {m.scored.rule:<6} L{m.scored.line:<5} "
                      f"{' '.join(m.scored.signals):<42} {m.proposal.claim[:90]}")

    print("\nper rule (all confidences): sessions with a hit / with noise; hits / noise; "
          f"then the same at the threshold {MIN_CONFIDENCE}")
    rules: dict[str, dict[str, set[str] | int]] = defaultdict(lambda: defaultdict(int))
    for sid, ms in moments.items():
        for m in ms:
            r = rules[m.scored.rule]
            key = "hit" if m.hit else "noise"
            r[key] += 1
            r.setdefault(f"{key}_sessions", set()).add(sid)
            if m.scored.confidence >= MIN_CONFIDENCE:
                r[f"{key}@"] += 1
                r.setdefault(f"{key}_sessions@", set()).add(sid)
    for name, r in sorted(rules.items(), key=lambda kv: (-len(kv[1].get("hit_sessions", ())), kv[0])):
        print(f"  {name:<7} sessions {len(r.get('hit_sessions', ())):>2} hit / {len(r.get('noise_sessions', ())):>2} "
              f"noise   {r['hit']:>2} hits {r['noise']:>3} noise   |  at {MIN_CONFIDENCE}: "
              f"{len(r.get('hit_sessions@', ())):>2} / {len(r.get('noise_sessions@', ())):>2} sessions, "
              f"{r['hit@']:>2} hits {r['noise@']:>2} noise")

    print("\nthreshold  kept  precise  precision  keep-recall")
    for th in THRESHOLDS:
        t = totals_at(sessions, moments, th)
        print(f"  {th:>2}{'*' if th == MIN_CONFIDENCE else ' '}     {t.kept:>4}  {t.precise:>7}  {t.precision:>9.2f}  "
              f"{t.keep_recall:>6.2f} ({t.keep_found}/{t.keep_labels})")

    held = Totals()
    chosen = []
    for s in sessions:
        rest = [o for o in sessions if o.id != s.id]
        th = choose_threshold(rest, moments, args.target)
        chosen.append(th)
        held.add(totals_at([s], moments, th).__class__() if False else _one(s, moments, th))
    print(f"\nleave-one-session-out (threshold chosen on the other {len(sessions) - 1} sessions for precision "
          f">= {args.target}): thresholds chosen {sorted(set(chosen))}")
    print(f"  held-out precision {held.precision:.2f} ({held.precise}/{held.kept})  keep-recall "
          f"{held.keep_recall:.2f} ({held.keep_found}/{held.keep_labels})")


def _one(session: EvalSession, moments: dict[str, list[Moment]], threshold: int):
    """The score of one held-out session at ``threshold``."""
    kept = [m.proposal for m in moments[session.id] if m.scored.confidence >= threshold]
    return score_session(session.id, kept, session.labels or [], proposed=len(kept), verified=len(kept))


if __name__ == "__main__":
    main()
