"""Pairing a deleted file with a new one as a rename, in O(n log n) (issue 23).

Exact pairs (the same blob id) are found through a map of blob ids. The similarity step never
compares all pairs: each text's words and word pairs ("shingles") are counted over every side, the
shingles most files share (frontmatter keys, boilerplate) are dropped, and each side keeps a sketch
of its :data:`SKETCH` smallest shingle hashes. A new file is compared only with deleted files of the
same folder whose sketch shares a hash with its own, the most shared first, at most :data:`PER_FILE`
of them and :data:`TOTAL` comparisons per scan. Two texts are similar when their distinctive
shingles overlap (Dice coefficient) by :data:`THRESHOLD`. A pair whose two sides were both already
pending, unchanged, was compared by an earlier scan and is not compared again. Texts over
:data:`TEXT_MAX` bytes are paired only exactly.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

PER_FILE = 4
TOTAL = 20_000
TEXT_MAX = 64 * 1024
THRESHOLD = 0.6
SKETCH = 8
COMMON = 0.05
"""A shingle found in more than this share of the files (and more than 3) says nothing about which."""

_WORD = re.compile(r"\w+")


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


def shingles(data: bytes) -> set[str]:
    """The words and word pairs of a text (lower case)."""
    words = _WORD.findall(data.decode("utf-8", "replace").lower())
    return {*words, *(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))}


def dice(a: set[str], b: set[str]) -> float:
    """How much two shingle sets overlap (0 to 1)."""
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


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
    d_left = [d for d in gone.values() if d.size <= TEXT_MAX]
    a_left = [a for a in sorted(new.values(), key=lambda s: s.path) if a.size <= TEXT_MAX]
    if not d_left or not a_left or not any(not x.settled for x in (*d_left, *a_left)):
        return out
    folders = {d.folder for d in d_left}
    a_left = [a for a in a_left if a.folder in folders]
    wanted = {a.folder for a in a_left}
    d_left = [d for d in d_left if d.folder in wanted]
    if not a_left:
        return out
    old_texts, new_texts = texts(d_left, a_left)
    sets = {("d", p): shingles(t) for p, t in old_texts.items()}
    sets.update({("a", p): shingles(t) for p, t in new_texts.items()})
    df: Counter[str] = Counter()
    for shingle_set in sets.values():
        df.update(shingle_set)
    common = max(3, int(COMMON * len(sets)))
    for key, shingle_set in sets.items():
        sets[key] = {x for x in shingle_set if df[x] <= common}
    index: dict[tuple[str, int], list[Side]] = defaultdict(list)
    for d in d_left:
        for h in sorted(hash(x) for x in sets.get(("d", d.path), ()))[:SKETCH]:
            index[(d.folder, h)].append(d)
    budget = TOTAL
    taken: set[str] = set()
    for a in a_left:
        mine = sets.get(("a", a.path))
        if not mine or budget <= 0:
            continue
        shared: Counter[str] = Counter()
        by_path: dict[str, Side] = {}
        for h in sorted(hash(x) for x in mine)[:SKETCH]:
            for d in index.get((a.folder, h), ())[: 4 * PER_FILE]:
                if d.path not in taken and not (a.settled and d.settled):
                    shared[d.path] += 1
                    by_path[d.path] = d
        for path, _ in shared.most_common(min(PER_FILE, budget)):
            budget -= 1
            if dice(sets.get(("d", path), set()), mine) >= THRESHOLD:
                out[a.path] = path
                taken.add(path)
                break
    return out
