"""Measure dedup on the labelled set: recall on reworded duplicates, false positives on distinct lessons.

Usage: ``python tests/bench/measure_dedup.py [--show]``

The set (``tests/data/dedup_labelled.jsonl``) holds pairs ``{a, b, label, topic}``: ``duplicate``
pairs say the same lesson in other words, ``distinct`` pairs are different lessons on the same topic.
Every ``a`` goes into one index (as memory files would); each ``b`` is scored against its own ``a``
(pair score) and against the whole index (what the gate sees). Reported at both thresholds
(SUSPECT: shown side by side; DUPLICATE: dropped).

Two sets: ``dedup_labelled.jsonl`` (80 pairs) was used to choose the weights, synonyms and
thresholds; ``dedup_heldout.jsonl`` (30 pairs, new topics) was written after tuning and measured
once, so it estimates how the method does on lessons it was not tuned on.
``dedup_heldout2.jsonl`` (138 pairs, 69 + 69, written independently without looking at the synonym
table or rules) is a second, larger held-out set; it is never tuned on.

``--show`` prints every pair of the tuning set; add ``--heldout`` or ``--heldout2`` for the others.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dreamtui.core.dedup import DUPLICATE, SUSPECT, DedupIndex, Doc, similarity_of

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
        pair_dup = [similarity_of(Doc.of("memory", "b", p["b"]), Doc.of("memory", "a", p["a"]),
                                  index.weights) for p in dups]
        pair_dist = [similarity_of(Doc.of("memory", "b", p["b"]), Doc.of("memory", "a", p["a"]),
                                   index.weights) for p in dist]
        out[f"recall@{name}"] = sum(s >= threshold for s in pair_dup) / len(dups)
        out[f"fp@{name}"] = sum(s >= threshold for s in pair_dist) / len(dist)
        hits = [index.closest(p["b"]) for p in dist]
        out[f"fp_any@{name}"] = sum(h is not None and h.score >= threshold for h in hits) / len(dist)
        right = [index.closest(p["b"]) for p in dups]
        out[f"recall_right@{name}"] = sum(
            h is not None and h.ref == p["a"] and h.score >= threshold for h, p in zip(right, dups, strict=True)
        ) / len(dups)
    return out


def main(argv: list[str]) -> None:
    tune, held, held2 = load(DATA), load(HELDOUT), load(HELDOUT2)
    print(f"thresholds: SUSPECT={SUSPECT} DUPLICATE={DUPLICATE}")
    for name, subset in (("tuning set", tune), ("held-out set", held), ("tuning + held-out", tune + held),
                         ("held-out set 2", held2)):
        r = evaluate(subset)
        n_dup = sum(p["label"] == "duplicate" for p in subset)
        print(f"{name} ({len(subset)} pairs, {n_dup} duplicates):")
        print("   " + "  ".join(f"{k}={v:.1%}" for k, v in r.items()))
    if "--show" in argv:
        pairs = held2 if "--heldout2" in argv else held if "--heldout" in argv else tune
        memory = DedupIndex(Doc.of("memory", p["a"], p["a"]) for p in pairs)
        for p in pairs:
            s = similarity_of(Doc.of("memory", "b", p["b"]), Doc.of("memory", "a", p["a"]), memory.weights)
            flag = "DUP " if s >= DUPLICATE else "SUSP" if s >= SUSPECT else "    "
            print(f"{s:.3f} {flag} {p['label']:9s} {p['a'][:60]!r} | {p['b'][:60]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
