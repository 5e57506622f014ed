"""Measure the model dedup judge on the labelled dedup sets: lexical alone vs lexical + judge.

Usage: ``ANTHROPIC_API_KEY=… python tests/bench/measure_dedup_judge.py [--set NAME]… [--limit N] [--show]``

Without ``ANTHROPIC_API_KEY`` it says that it needs one and exits 0 (it costs money: one
``messages.parse`` call per 20 lessons, about 35 calls for all 688 pairs). The model is the
extractor's (``DREAMTUI_MODEL`` / ``model`` in the config, default ``claude-sonnet-5-5``).

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
        answers = judge.judge([JudgeItem(pairs[i]["b"], tuple(Existing(ref, ref) for _s, ref in options[i]))
                               for i in todo])
    except JudgeError as exc:
        print(f"{name}: the judge failed: {exc}")
        raise SystemExit(1) from None
    judge_s = time.perf_counter() - started
    verdict: dict[int, Verdict | None] = dict(zip(todo, answers, strict=True))

    c = {"dup": 0, "dist": 0, "lex_recall": 0, "lex_fp_pair": 0, "lex_fp_any": 0, "j_recall": 0, "j_fp_pair": 0,
         "j_fp_any": 0, "ceiling": 0, "unanswered": 0}
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
            print(f"  {p['label']:9} lexical={'flag' if lex == p['a'] else '-':4} judge={'flag' if joint == p['a'] else '-':4}"
                  f"  {p['b'][:70]!r}  ← {why}")
    report(name, c)
    per_item = len(todo) or 1
    print(f"  time: lexical ranking {1000 * lexical_s / len(pairs):.2f} ms/lesson, judge {1000 * judge_s / per_item:.0f} "
          f"ms/lesson (judge/lexical = {judge_s / max(lexical_s, 1e-9):.0f}×)")
    return c


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:5.1f} % ({n}/{d})" if d else "   n/a"


def report(name: str, c: dict[str, int]) -> None:
    """One set's lines."""
    print(f"{name}: {c['dup']} duplicates + {c['dist']} distinct; top-5 ceiling {_pct(c['ceiling'], c['dup'])}"
          + (f"; {c['unanswered']} unanswered" if c["unanswered"] else ""))
    print(f"  lexical alone    recall {_pct(c['lex_recall'], c['dup'])}   fp(pair) {_pct(c['lex_fp_pair'], c['dist'])}"
          f"   fp(any) {_pct(c['lex_fp_any'], c['dist'])}")
    print(f"  lexical + judge  recall {_pct(c['j_recall'], c['dup'])}   fp(pair) {_pct(c['j_fp_pair'], c['dist'])}"
          f"   fp(any) {_pct(c['j_fp_any'], c['dist'])}")


def main(argv: list[str]) -> int:
    sets = sorted(p.stem.removeprefix("dedup_") for p in DATA.glob("dedup_*.jsonl"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=sets, help="a set to measure (default: all)")
    parser.add_argument("--limit", type=int, default=0, help="at most N pairs per set (to bound the cost)")
    parser.add_argument("--show", action="store_true", help="print every pair the judge changed")
    args = parser.parse_args(argv)
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print("measure_dedup_judge needs ANTHROPIC_API_KEY (it calls the model); nothing was measured.")
        return 0
    config = load_config()
    judge = AnthropicJudge(config)
    print(f"model {config.model}; SUSPECT={SUSPECT}; up to {MAX_EXISTING} lessons above {JUDGE_FLOOR} offered per lesson")
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
    print(f"usage: {u.calls} calls, {u.input_tokens} input tokens, {u.output_tokens} output, {u.cached_tokens} cached")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
