"""Measure the model dedup judge on the labelled dedup sets: lexical alone vs lexical + judge.

Usage: ``ANTHROPIC_API_KEY=… python tests/bench/measure_dedup_judge.py [--set NAME]… [--limit N] [--show]``

Without ``ANTHROPIC_API_KEY`` it says that it needs one and exits 0 (it costs money: one
``messages.parse`` call per 20 lessons, about 35 calls for all 688 pairs). The model is the
extractor's (``DREAMTUI_MODEL`` / ``model`` in the config, default ``claude-sonnet-5-5``).

Recorded (no key): ``--dump-requests DIR`` writes the exact requests the judge would send (through the
real SDK to the local fake API, which answers nothing); a Claude model answers them (a helper session
given only the request) and ``tests/bench/eval_prepare.py collect`` stores the answers verbatim under
``tests/data/real_eval/recorded-judge/TAG/``; ``--recorded TAG`` replays them through the real SDK
against the local fake API. Those figures are a model's recorded answers, not a live API run.

For each set ``tests/data/dedup_<NAME>.jsonl`` every ``a`` goes into one index (as memory files
would). Each ``b`` is a new lesson: its top-5 ranked ``a``s scoring above 0.10 are what the gate
would offer the judge. At the suspect level (what the person is shown beside the proposal):

- **lexical alone**: ``b`` is flagged when its closest ``a`` scores at least ``SUSPECT``;
- **lexical + judge**: as in the gate, a ``b`` whose closest ``a`` scores at least ``DUPLICATE``
  is dropped lexically and never judged (it counts as flagged); for the others the judge's ``same``
  flags ``b`` with that ``a``, its ``none`` clears the lexical flag, and an item the judge did not
  answer keeps the lexical result.

Reported: **recall** (reworded duplicates flagged with their own ``a``), **false positives (pair)**
(distinct ``b`` flagged with its own, different, ``a``) and **false positives (any)** (distinct ``b``
flagged with any ``a``), plus the ceiling (duplicates whose ``a`` was among the offered five).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from dreamtui.core.config import load_config
from dreamtui.core.gate.dedup import DUPLICATE, SUSPECT, DedupIndex, Doc
from dreamtui.core.gate.judge import MAX_EXISTING, AnthropicJudge, Existing, JudgeError, JudgeItem, Verdict
from dreamtui.core.gate.pipeline import JUDGE_FLOOR

DATA = Path(__file__).resolve().parent.parent / "data"


def load(path: Path) -> list[dict[str, str]]:
    """The labelled pairs of one set."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def offered(index: DedupIndex, text: str) -> list[tuple[float, str]]:
    """What the gate would offer the judge: the top distinct ``a``s scoring above the floor."""
    found: dict[str, float] = {}
    for score, doc in index.ranked(text):
        if score <= JUDGE_FLOOR or len(found) >= MAX_EXISTING:
            break
        found.setdefault(doc.ref, score)
    return [(s, ref) for ref, s in found.items()]


def measure(name: str, pairs: list[dict[str, str]], judge: AnthropicJudge, show: bool) -> dict[str, int]:
    """Judge one set; returns the counts for the pooled line."""
    index = DedupIndex(Doc.of("memory", a, a) for a in sorted({p["a"] for p in pairs}))
    started = time.perf_counter()
    options = [offered(index, p["b"]) for p in pairs]
    lexical_s = time.perf_counter() - started
    # as in the gate: a lesson lexical dedup drops (>= DUPLICATE) never reaches the judge
    todo = [i for i, opts in enumerate(options) if opts and opts[0][0] < DUPLICATE]
    started = time.perf_counter()
    try:
        answers = judge.judge(
            [JudgeItem(pairs[i]["b"], tuple(Existing(ref, ref) for _s, ref in options[i])) for i in todo]
        )
    except JudgeError as exc:
        print(f"{name}: the judge failed: {exc}")
        raise SystemExit(1) from None
    judge_s = time.perf_counter() - started
    verdict: dict[int, Verdict | None] = dict(zip(todo, answers, strict=True))

    c = {
        "dup": 0,
        "dist": 0,
        "lex_recall": 0,
        "lex_fp_pair": 0,
        "lex_fp_any": 0,
        "j_recall": 0,
        "j_fp_pair": 0,
        "j_fp_any": 0,
        "ceiling": 0,
        "unanswered": 0,
    }
    for i, p in enumerate(pairs):
        opts = options[i]
        lex = opts[0][1] if opts and opts[0][0] >= SUSPECT else None
        v = verdict.get(i)
        if v is None:
            joint = lex
            c["unanswered"] += i in verdict
        else:
            joint = opts[v.same][1] if v.same is not None else None
        if p["label"] == "duplicate":
            c["dup"] += 1
            c["lex_recall"] += lex == p["a"]
            c["j_recall"] += joint == p["a"]
            c["ceiling"] += any(ref == p["a"] for _s, ref in opts)
        else:
            c["dist"] += 1
            c["lex_fp_pair"] += lex == p["a"]
            c["lex_fp_any"] += lex is not None
            c["j_fp_pair"] += joint == p["a"]
            c["j_fp_any"] += joint is not None
        if show and (lex == p["a"]) != (joint == p["a"]):
            why = v.reason if v is not None else "(no verdict)"
            print(
                f"  {p['label']:9} lexical={'flag' if lex == p['a'] else '-':4} judge={'flag' if joint == p['a'] else '-':4}"
                f"  {p['b'][:70]!r}  ← {why}"
            )
    report(name, c)
    per_item = len(todo) or 1
    print(
        f"  time: lexical ranking {1000 * lexical_s / len(pairs):.2f} ms/lesson, judge {1000 * judge_s / per_item:.0f} "
        f"ms/lesson (judge/lexical = {judge_s / max(lexical_s, 1e-9):.0f}×)"
    )
    return c


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:5.1f} % ({n}/{d})" if d else "   n/a"


def report(name: str, c: dict[str, int]) -> None:
    """One set's lines."""
    print(
        f"{name}: {c['dup']} duplicates + {c['dist']} distinct; top-5 ceiling {_pct(c['ceiling'], c['dup'])}"
        + (f"; {c['unanswered']} unanswered" if c["unanswered"] else "")
    )
    print(
        f"  lexical alone    recall {_pct(c['lex_recall'], c['dup'])}   fp(pair) {_pct(c['lex_fp_pair'], c['dist'])}"
        f"   fp(any) {_pct(c['lex_fp_any'], c['dist'])}"
    )
    print(
        f"  lexical + judge  recall {_pct(c['j_recall'], c['dup'])}   fp(pair) {_pct(c['j_fp_pair'], c['dist'])}"
        f"   fp(any) {_pct(c['j_fp_any'], c['dist'])}"
    )


def main(argv: list[str]) -> int:
    sets = sorted(p.stem.removeprefix("dedup_") for p in DATA.glob("dedup_*.jsonl"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=sets, help="a set to measure (default: all)")
    parser.add_argument("--limit", type=int, default=0, help="at most N pairs per set (to bound the cost)")
    parser.add_argument("--show", action="store_true", help="print every pair the judge changed")
    parser.add_argument(
        "--dump-requests",
        type=Path,
        metavar="DIR",
        help="write the requests the judge would send to DIR (no key, no network)",
    )
    parser.add_argument("--recorded", metavar="TAG", help="replay recorded answers (recorded-judge/TAG)")
    args = parser.parse_args(argv)
    config = load_config()
    fake = None
    if args.dump_requests or args.recorded:
        fake = _fake_api(args.dump_requests, args.recorded)
        judge = AnthropicJudge(config, api_key="recorded", base_url=fake.url)
    elif not os.environ.get("ANTHROPIC_API_KEY"):
        print(
            "measure_dedup_judge needs ANTHROPIC_API_KEY (it calls the model), or --recorded TAG; "
            "nothing was measured."
        )
        return 0
    else:
        judge = AnthropicJudge(config)
    print(
        f"model {config.model}; SUSPECT={SUSPECT}; up to {MAX_EXISTING} lessons above {JUDGE_FLOOR} offered per lesson"
    )
    pooled: dict[str, int] = {}
    for name in args.set or sets:
        pairs = load(DATA / f"dedup_{name}.jsonl")
        if args.limit:
            pairs = pairs[: args.limit]
        for k, v in measure(name, pairs, judge, args.show).items():
            pooled[k] = pooled.get(k, 0) + v
    if len(args.set or sets) > 1:
        report("all sets", pooled)
    u = judge.usage
    print(
        f"usage: {u.calls} calls, {u.input_tokens} input tokens, {u.output_tokens} output, {u.cached_tokens} cached"
    )
    if fake is not None:
        fake.__exit__(None, None, None)
    return 0


def _fake_api(dump: Path | None, tag: str | None):
    """The local fake Messages API: it records each request to ``dump``, or answers from recording ``tag``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from fakes.anthropic_server import FakeAnthropic, Reply, error, message
    from fakes.eval_set import RECORDED, load_recorded, request_key

    answers = load_recorded(tag, RECORDED.parent / "recorded-judge") if tag else {}
    count = [0]

    def respond(body: dict) -> Reply:
        if dump is not None:
            count[0] += 1
            dump.mkdir(parents=True, exist_ok=True)
            system = "\n".join(b["text"] for b in body["system"])
            schema = json.dumps(body["output_config"]["format"]["schema"], indent=1)
            (dump / f"judge.{count[0]}.txt").write_text(
                f"=== SYSTEM PROMPT ===\n{system}\n=== USER MESSAGE ===\n{body['messages'][0]['content']}\n"
                f"=== OUTPUT FORMAT: a JSON object matching this JSON schema ===\n{schema}\n"
            )
            (dump / f"judge.{count[0]}.key").write_text(request_key(body))
            return Reply(200, message({"verdicts": []}))
        text = answers.get(request_key(body))
        if text is None:
            return error(
                400, "invalid_request_error", "no recorded answer for this request", retry_after_ms=None
            )
        return Reply(200, message(text))

    fake = FakeAnthropic()
    fake.responder = respond
    return fake.__enter__()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
