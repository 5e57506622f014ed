"""Prepare the real evaluation set: the manifest, the digests labellers read, the requests a model answers.

Run from the repository root:

    python3 tests/bench/eval_prepare.py manifest           # merge ../eval/manifest-*.json and ../shared into
                                                            # tests/data/real_eval/manifest.json (splits fixed once)
    python3 tests/bench/eval_prepare.py agents             # merge ../eval-agents/manifest-agents.json (the other
                                                            # agents' sessions, split ``agents``) into it
    python3 tests/bench/eval_prepare.py digests OUT [SPLIT] # OUT/<id>.txt: the digest a labeller reads
    python3 tests/bench/eval_prepare.py requests TAG OUT [SPLIT]  # OUT/<id>.<k>.txt: request k of each session
    python3 tests/bench/eval_prepare.py rekey TAG [SPLIT]  # recompute the stored portable keys (never an answer)
    python3 tests/bench/eval_prepare.py collect TAG ANSWERS REQUESTS [judge]
                                                            # ANSWERS/<id>.<k>.json -> recorded[-judge]/TAG/<id>.json

A session's split is drawn once from a hash of its id and never changes; the ``../shared`` sessions are
``tuning`` (earlier rules were tuned on them). Answers are stored verbatim: ``collect`` copies the
answer file's text as it is.

Every format dreamtui reads works the same way: a session's files (or, for a file holding many
sessions, its address ``<file>#<session id>``) are read by the format that claims them
(``formats.format_for``). A digest file is exactly what ``dreamtui digest --session FILE`` prints for the
session, and a request file exactly what ``dreamtui extract FILE --show-request`` prints for that request
(with an empty memory and the default settings).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from fakes.eval_set import (  # noqa: E402
    MANIFEST,
    RECORDED,
    ROOTS,
    load_sessions,
    location_names,
    portable_key,
    request_key,
    sha256,
)

BLIND_SHARE = 60
"""Percent of the gathered sessions drawn into the blind split."""


def _split_of(sid: str) -> str:
    return "blind" if int(hashlib.sha256(sid.encode()).hexdigest(), 16) % 100 < BLIND_SHARE else "tuning"


def build_manifest() -> None:
    from dreamtui.core.ingest.transcripts import discover, session_files

    old = {e["id"]: e for e in json.loads(MANIFEST.read_text())} if MANIFEST.is_file() else {}
    entries: list[dict] = []
    shared = ROOTS["shared"] / "projects"
    if shared.is_dir():
        sessions = sorted({(tf.project, tf.session) for tf in discover(shared)})
        for n, (project, session) in enumerate(sessions, 1):
            files = session_files(shared, project, session)
            entries.append(
                {
                    "id": f"s{n:02d}",
                    "root": "shared",
                    "split": "tuning",
                    "project_folder": project,
                    "session": session,
                    "rebuilt": False,
                    "files": [
                        {
                            "eval_path": str(f.relative_to(ROOTS["shared"])),
                            "source": "see ../shared/corpus/SOURCES.md",
                            "sha256": hashlib.sha256(f.read_bytes()).hexdigest(),
                        }
                        for f in files
                    ],
                }
            )
    for name in ("manifest-native.json", "manifest-rebuilt.json"):
        path = ROOTS["eval"] / name
        if not path.is_file():
            continue
        for e in json.loads(path.read_text()):
            split = old.get(e["id"], {}).get("split") or _split_of(e["id"])
            entries.append(
                {
                    "id": e["id"],
                    "root": "eval",
                    "split": split,
                    "project_folder": e["project_folder"],
                    "session": e["session"],
                    "rebuilt": bool(e.get("rebuilt")),
                    "agent": e.get("agent", "claude-code"),
                    "notes": e.get("notes", ""),
                    "files": e["files"],
                }
            )
    for root, split in (("eval2", "blind2"), ("eval3", "blind3")):
        # later blind sets: each gathered after the previous one was measured, never tuned on when gathered
        path = ROOTS[root] / "manifest-native.json"
        if not path.is_file():
            continue
        for e in json.loads(path.read_text()):
            entries.append(
                {
                    "id": e["id"],
                    "root": root,
                    "split": split,
                    "project_folder": e["project_folder"],
                    "session": e["session"],
                    "rebuilt": False,
                    "agent": "claude-code",
                    "notes": e.get("notes", ""),
                    "files": e["files"],
                }
            )
    rebuilt = {"shared", "eval", "eval2", "eval3"}
    entries.extend(
        e for e in old.values() if e["root"] not in rebuilt
    )  # long, blind4, agents: kept as merged
    MANIFEST.parent.mkdir(parents=True, exist_ok=True)
    MANIFEST.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    by = {s: sum(1 for e in entries if e["split"] == s) for s in sorted({e["split"] for e in entries})}
    print(f"{len(entries)} sessions: {by}")


AGENTS_FRAGMENT = "manifest-agents.json"
"""The other agents' sessions as gathered: ``../eval-agents/manifest-agents.json`` (id, format, notes, files)."""


def merge_agents() -> None:
    """Merge the other agents' real sessions (root ``eval-agents``, split ``agents``: gathered to be
    measured, never tuned on) into the manifest, each with its format, project and session as dreamtui
    reads them there."""
    from fakes.eval_set import file_path

    from dreamtui.core.ingest import formats
    from dreamtui.services.transcripts import session_files_for

    root = ROOTS["eval-agents"]
    fragment = json.loads((root / AGENTS_FRAGMENT).read_text(encoding="utf-8"))
    entries = [e for e in json.loads(MANIFEST.read_text(encoding="utf-8")) if e["root"] != "eval-agents"]
    for e in fragment:
        main = file_path(root, e["files"][0])
        fmt = formats.format_for(main)
        if fmt.name != e["format"]:
            sys.exit(f"{e['id']}: {main} is read as {fmt.name}, not {e['format']}")
        listed = [file_path(root, f) for f in e["files"]]
        found = session_files_for(main)
        if [str(f) for f in found] != [str(f) for f in listed]:
            sys.exit(f"{e['id']}: the fragment lists {listed}, dreamtui reads the session as {found}")
        tf = fmt.describe(main)
        entries.append(
            {
                "id": e["id"],
                "root": "eval-agents",
                "split": "agents",
                "project_folder": tf.project,
                "session": tf.session,
                "rebuilt": False,
                "agent": e["format"],
                "format": e["format"],
                "notes": e.get("notes", ""),
                "files": e["files"],
            }
        )
    MANIFEST.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(fragment)} sessions of other agents merged: {sorted({e['format'] for e in fragment})}")


def _digest(session) -> object:
    """The session's digest as ``dreamtui digest --session`` and ``dreamtui extract`` read it: its files
    (main first, then sub-agents'), each read by the format that claims it."""
    from dreamtui.core.ingest.digest import digest_session

    return digest_session(session.files)


def write_digests(out: Path, split: str = "all") -> None:
    """``OUT/<id>.txt``: exactly what ``dreamtui digest --session FILE`` prints (what a labeller reads)."""
    from dreamtui.cli.digest_cmd import render

    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for s in load_sessions(split, labelled_only=False):
        text = render(_digest(s)) + "\n"
        if "\n[" not in text:
            print(f"{s.id}: the digest has no turn")
        (out / f"{s.id}.txt").write_text(text, encoding="utf-8")
        n += 1
    print(f"{n} digests in {out}")


def request_bodies(digest) -> list[dict]:
    """The bodies ``dreamtui extract --show-request`` prints for ``digest`` with the default settings and
    an empty memory (the same requests ``measure_extract.py`` replays)."""
    from dreamtui.core.config import Config
    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
    from dreamtui.core.extract.base import ExtractContext

    defaults = Config.model_fields
    ex = AnthropicExtractor(
        model=defaults["model"].default, max_chars=defaults["max_digest_chars"].default, client=object()
    )
    return ex.request_bodies(digest, ExtractContext(project=digest.project))


def write_requests(tag: str, out: Path, split: str = "all") -> None:
    """``OUT/<id>.<k>.txt``: request k of each session exactly as ``dreamtui extract FILE --show-request``
    prints it; ``.key`` its recording key, ``.pkey`` the key without where the files lie."""
    from dreamtui.cli.extract_cmd import request_text

    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for s in load_sessions(split, labelled_only=False):
        digest = _digest(s)
        bodies = request_bodies(digest)
        for k, body in enumerate(bodies, 1):
            (out / f"{s.id}.{k}.txt").write_text(request_text(body, k, len(bodies)), encoding="utf-8")
            (out / f"{s.id}.{k}.key").write_text(request_key(body))
            (out / f"{s.id}.{k}.pkey").write_text(portable_key(body, location_names(digest)))
            n += 1
    print(f"{n} requests of tag {tag} in {out}")


def rekey(tag: str, split: str = "agents") -> None:
    """Recompute the ``portable_key`` of each recorded request of ``split`` whose ``key`` is still the
    request's (its answer and every other field left as stored): keys made before ties between names of
    one length were broken by name depended on the run's hash seed."""
    changed = 0
    for s in load_sessions(split, labelled_only=False):
        path = RECORDED / tag / f"{s.id}.json"
        if not path.is_file():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        digest = _digest(s)
        by_key = {request_key(b): portable_key(b, location_names(digest)) for b in request_bodies(digest)}
        for req in data["requests"]:
            new = by_key.get(req["key"])
            if new and req.get("portable_key") and req["portable_key"] != new:
                req["portable_key"] = new
                changed += 1
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{changed} portable keys recomputed under {RECORDED / tag}")


def collect(tag: str, answers: Path, requests: Path, kind: str = "extract") -> None:
    dest = (RECORDED if kind == "extract" else RECORDED.parent / "recorded-judge") / tag
    dest.mkdir(parents=True, exist_ok=True)
    by_session: dict[str, list[dict]] = {}
    for key_file in sorted(requests.glob("*.key")):
        sid, k = key_file.stem.rsplit(".", 1)
        answer = answers / f"{sid}.{k}.json"
        if not answer.is_file():
            print(f"no answer for {sid} request {k}")
            continue
        text = answer.read_text(encoding="utf-8")
        entry = {
            "part": int(k),
            "key": key_file.read_text().strip(),
            "request_sha256": sha256((requests / f"{sid}.{k}.txt").read_text()),
            "answer": text,
        }
        pkey = requests / f"{sid}.{k}.pkey"
        if pkey.is_file():
            entry["portable_key"] = pkey.read_text().strip()
        by_session.setdefault(sid, []).append(entry)
    for sid, reqs in by_session.items():
        (dest / f"{sid}.json").write_text(
            json.dumps(
                {
                    "id": sid,
                    "tag": tag,
                    "answered_by": "a Claude model (a helper session given only the request), not a live API call",
                    "requests": sorted(reqs, key=lambda r: r["part"]),
                },
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        )
    print(f"{len(by_session)} sessions recorded under {dest}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "manifest":
        build_manifest()
    elif cmd == "agents":
        merge_agents()
    elif cmd == "digests":
        write_digests(Path(sys.argv[2]), *(sys.argv[3:4] or ["all"]))
    elif cmd == "requests":
        write_requests(sys.argv[2], Path(sys.argv[3]), *(sys.argv[4:5] or ["all"]))
    elif cmd == "rekey":
        rekey(sys.argv[2], *(sys.argv[3:4] or ["agents"]))
    elif cmd == "collect":
        collect(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), *(sys.argv[5:6] or ["extract"]))
    else:
        sys.exit(__doc__)
