"""Bring every topic file's frontmatter to the one schema (``dreamtui normalize``).

``plan_normalize`` reads the memory repo and says, file by file, what it would change and what it
cannot fix by itself; ``apply_normalize`` writes the fixable files and commits them as one commit
(``--only`` those paths, so a person's staged work is never swept in). Nothing is lost: fields
outside the schema move into an HTML comment at the end of the body, and a file whose frontmatter
cannot be read at all is left for a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamtui.core.config import Config
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.memory import frontmatter, textdiff
from dreamtui.core.memory import layout as memory
from dreamtui.core.models import MEMORY_TYPES, Jsonable

ALIASES: dict[str, str] = dict(
    title="name",
    summary="description",
    desc="description",
    kind="type",
    category="type",
    session="source_session",
    session_id="source_session",
    sessionid="source_session",
    source="source_session",
    line="verified_line",
    candidate_id="candidate",
    created_at="created",
    date="created",
    model="extractor",
)
"""Field names people (and older tools) use for the schema's fields."""

TYPE_ALIASES: dict[str, str] = {
    "preference": "user",
    "preferences": "user",
    "correction": "feedback",
    "references": "reference",
    "feedbacks": "feedback",
    "projects": "project",
}
PROMOTION_FILE = "promotion.md"
"""The promotion record ``dreamtui promote`` commits: not a topic file."""
NOT_TOPICS = frozenset({memory.INDEX, memory.BRIEFING, PROMOTION_FILE})
MOVED_NOTE = "dreamtui normalize: fields outside the schema, kept here"
DESCRIPTION_CHARS = 150


@dataclass(slots=True)
class Change(Jsonable):
    """What normalizing one topic file would do.

    ``after`` is ``None`` when the file cannot be fixed automatically; ``remaining`` lists what a
    person must still fix (empty when ``after`` follows the schema).
    """

    path: str
    problems: list[str]
    fixes: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    before: str = ""
    after: str | None = None

    @property
    def fixable(self) -> bool:
        """The rewrite brings this file fully to the schema."""
        return self.after is not None and not self.remaining

    def diff(self) -> str:
        """A unified diff of the rewrite (empty when there is none)."""
        if self.after is None:
            return ""
        return textdiff.unified_text(self.before, self.after, f"a/{self.path}", f"b/{self.path}")

    JSON_KEYS = ("path", "problems", "fixes", "remaining", "fixable")  # the texts are shown as a diff instead


def topic_files(config: Config) -> list[Path]:
    """The topic files of the memory repo, sorted: ``<slug>.md`` at the root (not the index, the
    briefing or ``promotion.md``) and ``projects/<project>/<slug>.md`` (the layout of ``core/memory.py``)."""
    root = Path(config.memory)
    found = [p for p in root.glob("*.md") if p.name not in NOT_TOPICS]
    found += list(root.glob(f"{memory.PROJECTS}/*/*.md"))
    return sorted(p for p in found if p.is_file() and not p.is_symlink() and not p.name.startswith("."))


def problems_of(path: Path) -> list[str]:
    """Every way ``path``'s frontmatter breaks the one schema (empty when it follows it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ["not UTF-8 text"]
    except OSError as exc:
        return [f"cannot read: {exc.strerror}"]
    try:
        meta, _body = frontmatter.parse(text)
    except frontmatter.FrontmatterError as exc:
        return [f"unreadable frontmatter: {exc}"]
    if not meta and frontmatter.split(text)[0] is None:
        return ["no frontmatter"]
    return frontmatter.validate(meta)


# -- fixing one file -------------------------------------------------------------------------------


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _humanize(stem: str) -> str:
    words = re.sub(r"[_\-]+", " ", stem).strip()
    for kind in MEMORY_TYPES:
        if words.lower().startswith(kind + " "):
            words = words[len(kind) + 1 :]
    return words[:1].upper() + words[1:] if words else stem


def _heading(body: str) -> str | None:
    body = re.sub(r"<!--.*?(-->|\Z)", "", body, flags=re.S)
    for line in body.splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip()
            if text:
                return text
    return None


def _first_sentence(body: str) -> str | None:
    body = re.sub(r"<!--.*?(-->|\Z)", "", body, flags=re.S)
    for line in body.splitlines():
        text = line.strip()
        if text and not text.startswith(("#", "<!--", "---", "```")):
            text = _one_line(text.lstrip("-*> ").strip())
            if text:
                return (
                    text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1].rstrip() + "…"
                )
    return None


def _type_from(value: Any, stem: str) -> str | None:
    """The schema type for ``value`` (case, plurals, aliases); from the file-name prefix only when the
    file names no type at all (a type it does name but we cannot map is left for a person)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        prefix = re.split(r"[_\-]", stem.lower(), maxsplit=1)[0]
        return prefix if prefix in MEMORY_TYPES else None
    if isinstance(value, str):
        kind = value.strip().lower()
        kind = TYPE_ALIASES.get(kind, kind)
        if kind in MEMORY_TYPES:
            return kind
    return None


def _created(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip().replace("/", "-")
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if len(text) <= 10:
        return dt.date().isoformat()
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + (
        "Z" if dt.tzinfo is not None and not dt.utcoffset() else (dt.strftime("%z") if dt.tzinfo else "")
    )


def normalize_text(text: str, stem: str) -> tuple[str | None, list[str]]:
    """(the file rewritten to the schema, what was fixed). ``None`` when its frontmatter cannot be read."""
    try:
        meta, body = frontmatter.parse(text)
    except frontmatter.FrontmatterError:
        return None, []
    if frontmatter.split(text)[0] is None:
        body = text
    fixes: list[str] = []
    out: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    if not meta:
        fixes.append("added frontmatter")
    for key, value in meta.items():
        target = key if key in frontmatter.FIELDS else ALIASES.get(key.lower().replace("-", "_"))
        if target is None or (target in meta and target != key) or target in out:
            moved[key] = value
            continue
        if target != key:
            fixes.append(f"renamed {key} to {target}")
        out[target] = value
    for key in ("name", "description"):
        if isinstance(out.get(key), str) and out[key] != _one_line(out[key]):
            out[key] = _one_line(out[key])
            fixes.append(f"joined {key} onto one line")
        elif out.get(key) is not None and not isinstance(out.get(key), str):
            out[key] = str(out[key])
            fixes.append(f"made {key} text")
    if not (isinstance(out.get("name"), str) and out["name"].strip()):
        out["name"] = _heading(body) or _humanize(stem)
        fixes.append("named it from its heading" if _heading(body) else "named it from its file name")
    if not (isinstance(out.get("description"), str) and out["description"].strip()):
        first = _first_sentence(body)
        if first:
            out["description"] = first
            fixes.append("described it by its first line")
    kind = _type_from(out.get("type"), stem)
    if kind and kind != out.get("type"):
        fixes.append(
            f"set type to {kind}" if out.get("type") in (None, "") else f"type {out.get('type')!r} -> {kind}"
        )
        out["type"] = kind
    line = out.get("verified_line")
    if isinstance(line, str) and line.strip().isdigit():
        out["verified_line"] = int(line.strip())
        fixes.append("made verified_line a number")
    for key in ("source_session", "quote", "candidate", "extractor"):
        if out.get(key) is not None and not isinstance(out[key], str):
            out[key] = str(out[key])
            fixes.append(f"made {key} text")
    for stamp_key in ("created", "modified"):
        stamp = out.get(stamp_key)
        if stamp is not None and frontmatter.validate(
            {"name": "x", "description": "x", "type": "user", stamp_key: stamp}
        ):
            fixed = _created(stamp)
            if fixed:
                out[stamp_key] = fixed
                fixes.append(f"{stamp_key} {stamp!r} -> {fixed}")
    if moved:
        note = "\n".join(frontmatter.dump(moved).split("\n")[1:-2]).replace("-->", "-- >")
        body = body.rstrip("\n") + ("\n\n" if body.strip() else "") + f"<!-- {MOVED_NOTE}\n{note}\n-->\n"
        fixes.append("moved " + ", ".join(moved) + " into the body")
    ordered = {k: out[k] for k in frontmatter.FIELDS if k in out}
    return frontmatter.dump(ordered, body), fixes


def plan_file(path: Path, root: Path) -> Change | None:
    """The change normalizing ``path`` would make, or ``None`` when it already follows the schema."""
    problems = problems_of(path)
    if not problems:
        return None
    rel = path.relative_to(root).as_posix()
    try:
        before = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return Change(rel, problems, remaining=problems)
    after, fixes = normalize_text(before, path.stem)
    if after is None:
        return Change(rel, problems, remaining=problems, before=before)
    remaining = frontmatter.validate(frontmatter.parse(after)[0])
    return Change(rel, problems, fixes, remaining, before, after)


def plan_normalize(config: Config) -> list[Change]:
    """What ``dreamtui normalize`` would change: one :class:`Change` per offending topic file."""
    root = Path(config.memory)
    return [c for c in (plan_file(p, root) for p in topic_files(config)) if c is not None]


def apply_normalize(config: Config, plan: list[Change]) -> str | None:
    """Rewrite the fixable files of ``plan`` and commit them as one commit; the commit sha.

    ``None`` when nothing in the plan is fixable. A file changed since the plan was made is refused
    (nothing is written); if the commit fails every file is put back as it was.
    """
    from dreamtui.core.memory import gitops

    root = Path(config.memory)
    todo = [c for c in plan if c.fixable]
    if not todo:
        return None
    for change in todo:
        try:
            current = (root / change.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise MemoryRepoError(f"cannot read {change.path} again: {exc}") from exc
        if current != change.before:
            raise MemoryRepoError(
                f"{change.path} changed since the plan was made: run `dreamtui normalize` again"
            )
    repo = gitops.open_repo(root, create=False)
    gitops.ensure_writable(repo)
    for change in todo:
        gitops.refuse_uncommitted(repo, change.path)
    written: list[Change] = []
    try:
        for change in todo:
            memory.atomic_write(root, change.path, (change.after or "").encode("utf-8"))
            written.append(change)
        count = len(todo)
        message = f"dreamtui: normalize the frontmatter of {count} topic file{'s' if count != 1 else ''}"
        return gitops.commit_paths(repo, [c.path for c in todo], message, {"Dreamtui-Normalize": "yes"}).sha
    except BaseException:
        for change in written:
            memory.atomic_write(root, change.path, change.before.encode("utf-8"), verbatim=True)
        raise
