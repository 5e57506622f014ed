"""Pairing a deleted file with a new one as a rename, in O(n log n) (issue 23).

Exact pairs (the same blob id) are found through a map of blob ids. The similarity step then looks at
few candidates only: a new file is compared with the deleted files of the same folder whose size is
in a neighbouring size bucket (:func:`size_bucket`), the closest sizes first, at most
:data:`PER_FILE` of them, and at most :data:`TOTAL` comparisons per scan. A pair whose two sides were
both already pending, unchanged, was compared by an earlier scan and is not compared again. Texts
over :data:`TEXT_MAX` bytes are paired only exactly.
"""

from __future__ import annotations

import difflib
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

PER_FILE = 4
TOTAL = 20_000
TEXT_MAX = 64 * 1024
THRESHOLD = 0.6


@dataclass(slots=True)
class Side:
    """One side of a possible rename: a deleted file (HEAD's blob) or a new one (the working blob)."""

    path: str
    blob: str
    size: int
    settled: bool = False
    """Already a pending item with this very blob: compared by an earlier scan."""

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


def size_bucket(size: int) -> int:
    """Sizes within about a factor of 1.25 share a bucket (a rename with an edit keeps its size)."""
    return int(math.log(size + 1, 1.25))


def similar(a: bytes, b: bytes) -> bool:
    """Whether two texts are (nearly) the same: a character match for small texts, a line match
    for larger ones (each bounded by :data:`TEXT_MAX`)."""
    if a == b:
        return True
    ta, tb = a.decode("utf-8", "replace"), b.decode("utf-8", "replace")
    if len(ta) + len(tb) > 8192:
        la, lb = ta.splitlines(), tb.splitlines()
        m = difflib.SequenceMatcher(None, la, lb, autojunk=False)
        return m.quick_ratio() >= THRESHOLD and m.ratio() >= THRESHOLD
    m = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    return m.quick_ratio() >= THRESHOLD and m.ratio() >= THRESHOLD


def pair(
    deleted: list[Side],
    added: list[Side],
    kept: dict[str, str],
    texts: Callable[[list[Side], list[Side]], tuple[dict[str, bytes], dict[str, bytes]]],
) -> dict[str, str]:
    """New path → deleted path of every rename. ``kept`` holds the pairs of earlier scans still true
    (new path → old path); ``texts(deleted, added)`` gives the bytes of the sides it is asked for
    (by path; a side left out is not compared)."""
    out: dict[str, str] = {}
    gone = {d.path: d for d in deleted}
    new = {a.path: a for a in added}
    for a_path, d_path in kept.items():
        if a_path in new and d_path in gone:
            out[a_path] = d_path
            del new[a_path], gone[d_path]
    by_blob: dict[str, list[Side]] = defaultdict(list)
    for d in sorted(gone.values(), key=lambda s: s.path):
        by_blob[d.blob].append(d)
    for a in sorted(new.values(), key=lambda s: s.path):
        same = by_blob.get(a.blob)
        if not same:
            continue
        match = next((d for d in same if d.folder == a.folder), same[0])
        same.remove(match)
        out[a.path] = match.path
        del new[a.path], gone[match.path]
    # the bounded similarity step
    buckets: dict[tuple[str, int], list[Side]] = defaultdict(list)
    for d in gone.values():
        if d.size <= TEXT_MAX:
            buckets[(d.folder, size_bucket(d.size))].append(d)
    plan: list[tuple[Side, list[Side]]] = []
    budget = TOTAL
    for a in sorted(new.values(), key=lambda s: s.path):
        if a.size > TEXT_MAX or budget <= 0:
            continue
        b = size_bucket(a.size)
        near = [
            d
            for k in (b - 1, b, b + 1)
            for d in buckets.get((a.folder, k), ())
            if not (a.settled and d.settled)
        ]
        if not near:
            continue
        near.sort(key=lambda d: (abs(d.size - a.size), d.path))
        near = near[: min(PER_FILE, budget)]
        budget -= len(near)
        plan.append((a, near))
    if not plan:
        return out
    want_d = list({d.path: d for _, near in plan for d in near}.values())
    old_texts, new_texts = texts(want_d, [a for a, _ in plan])
    taken: set[str] = set()
    for a, near in plan:
        text = new_texts.get(a.path)
        if text is None:
            continue
        for d in near:
            other = old_texts.get(d.path)
            if d.path in taken or other is None:
                continue
            if similar(other, text):
                out[a.path] = d.path
                taken.add(d.path)
                break
    return out
