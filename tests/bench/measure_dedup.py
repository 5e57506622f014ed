"""Measure dedup on labelled sets: recall on reworded duplicates, false positives on distinct lessons.

Usage: ``python tests/bench/measure_dedup.py [--blind] [--show SET]``

Each set holds pairs ``{a, b, label, topic}``: ``duplicate`` pairs say the same lesson in other words,
``distinct`` pairs are different lessons on the same topic. Every ``a`` goes into one index (as memory
files would); each ``b`` is scored against its own ``a`` (pair score) and against the whole index
(what the gate sees). Reported at both thresholds (SUSPECT: shown side by side; DUPLICATE: dropped).

The sets, in the order they were written (labels never changed after a set was written):

- ``dedup_labelled.jsonl`` (80 pairs): the rules, synonyms and first thresholds were chosen on it.
- ``dedup_heldout.jsonl`` (30 pairs): written after, measured once, then tuned on.
- ``dedup_heldout2.jsonl`` (138 pairs): written by someone who had not seen the rules; measured
  once (76.8% recall / 13.0% false positives), then tuned on.
- ``dedup_tuning2.jsonl`` (240 pairs): written blind to the rules, as tuning data for the
  specifics penalty and today's thresholds.
- ``dedup_heldout3.jsonl`` (200 pairs): written blind to the rules and never tuned on; read only
  with ``--blind``. It is the honest figure.

``--show SET`` prints every pair of one set (``labelled``, ``heldout``, ``heldout2``, ``tuning2``,
``heldout3``) with its score.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dreamtui.core.gate.dedup import DUPLICATE, SUSPECT, DedupIndex, Doc, similarity_of

DATA = Path(__file__).resolve().parent.parent / "data" / "dedup_labelled.jsonl"
HELDOUT = DATA.with_name("dedup_heldout.jsonl")
HELDOUT2 = DATA.with_name("dedup_heldout2.jsonl")


def load(path: Path = DATA) -> list[dict[str, str]]:
    """The labelled pairs."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate(pairs: list[dict[str, str]]) -> dict[str, float]:
    """Recall and false-positive rates at both thresholds, pairwise and against the whole index."""
    memory = {p["a"] for p in pairs}
    index = DedupIndex(Doc.of("memory", a, a) for a in sorted(memory))
    out: dict[str, float] = {}
    dups = [p for p in pairs if p["label"] == "duplicate"]
    dist = [p for p in pairs if p["label"] == "distinct"]
    for name, threshold in (("suspect", SUSPECT), ("duplicate", DUPLICATE)):
        pair_dup = [
            similarity_of(Doc.of("memory", "b", p["b"]), Doc.of("memory", "a", p["a"]), index.weights)
            for p in dups
        ]
        pair_dist = [
            similarity_of(Doc.of("memory", "b", p["b"]), Doc.of("memory", "a", p["a"]), index.weights)
            for p in dist
        ]
        out[f"recall@{name}"] = sum(s >= threshold for s in pair_dup) / len(dups)
        out[f"fp@{name}"] = sum(s >= threshold for s in pair_dist) / len(dist)
        hits = [index.closest(p["b"]) for p in dist]
        out[f"fp_any@{name}"] = sum(h is not None and h.score >= threshold for h in hits) / len(dist)
        right = [index.closest(p["b"]) for p in dups]
        out[f"recall_right@{name}"] = sum(
            h is not None and h.ref == p["a"] and h.score >= threshold
            for h, p in zip(right, dups, strict=True)
        ) / len(dups)
    return out


SETS = {
    "labelled": DATA,
    "heldout": HELDOUT,
    "heldout2": HELDOUT2,
    "tuning2": DATA.with_name("dedup_tuning2.jsonl"),
    "heldout3": DATA.with_name("dedup_heldout3.jsonl"),
}
KEYS = ("recall@suspect", "fp@suspect", "fp_any@suspect", "recall@duplicate", "fp@duplicate")


def main(argv: list[str]) -> None:
    print(f"thresholds: SUSPECT={SUSPECT} DUPLICATE={DUPLICATE}")
    sets = {name: load(path) for name, path in SETS.items() if name != "heldout3" or "--blind" in argv}
    pooled = [p for name, pairs in sets.items() if name != "heldout3" for p in pairs]
    rows = [*sets.items(), ("all tuned on", pooled)]
    for name, subset in rows:
        r = evaluate(subset)
        n_dup = sum(p["label"] == "duplicate" for p in subset)
        tag = "BLIND " if name == "heldout3" else ""
        print(
            f"{tag}{name} ({len(subset)} pairs, {n_dup} duplicates): "
            + "  ".join(f"{k}={r[k]:.1%}" for k in KEYS)
        )
    if "--show" in argv:
        which = argv[argv.index("--show") + 1]
        pairs = load(SETS[which])
        memory = DedupIndex(Doc.of("memory", p["a"], p["a"]) for p in pairs)
        for p in pairs:
            s = similarity_of(Doc.of("memory", "b", p["b"]), Doc.of("memory", "a", p["a"]), memory.weights)
            flag = "DUP " if s >= DUPLICATE else "SUSP" if s >= SUSPECT else "    "
            print(f"{s:.3f} {flag} {p['label']:9s} {p['a'][:60]!r} | {p['b'][:60]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
