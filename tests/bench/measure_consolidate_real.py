"""Measure consolidation (issue 26) on real pairs: a project's memory as it was, and a later session.

    python3 tests/bench/measure_consolidate_real.py requests OUT      # OUT/<id>.txt + <id>.key
    python3 tests/bench/measure_consolidate_real.py collect ANSWERS REQUESTS   # -> recorded/<prompt>/
    python3 tests/bench/measure_consolidate_real.py score [-v]      # replay the recorded answers

The pairs (``tests/data/real_eval/consolidation/manifest.json``; files beside the repository in
``../cons``, ``DREAMTUI_CONS_DIR``) were labelled blind (``labels/``, see that folder's README). Each
pair's memory files are laid out as the project's memory folder of a fresh memory repository, its
session digested, and the real REM pass (:func:`dreamtui.core.dream.consolidation.run_pass`: the
offline finders, then one model request whose quotes are verified) runs with the anthropic model
answering from a Claude model's recorded answers through the real SDK and the local fake Messages API.

Scored: a proposal to **update or retire** a memory is right when the labeller changed (updated or
retired) the same memory file; a **merge** is right when a labelled merge names at least two of its
files. Precision is right proposals over proposals, per kind; recall is labelled `sure` changes found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from fakes.eval_set import request_key, sha256  # noqa: E402

DATA = HERE.parent / "data" / "real_eval" / "consolidation"
ROOT = Path(os.environ.get("DREAMTUI_CONS_DIR") or HERE.parent.parent.parent / "cons")


def pairs() -> list[dict[str, Any]]:
    """The manifest's pairs whose files are on this machine."""
    out = []
    for e in json.loads((DATA / "manifest.json").read_text(encoding="utf-8")):
        if all((ROOT / f["eval_path"]).is_file() for f in e["files"]):
            out.append(e)
    return out


def lay_out(pair: dict[str, Any], work: Path) -> tuple[Path, str]:
    """A fresh memory repository holding the pair's memory files as its project's folder."""
    import git

    from dreamtui.core.memory import layout as memory

    project = pair["project_folder"]
    root = work / pair["id"] / "memory"
    folder = root / memory.PROJECTS / memory.legacy_project_folder(project)
    src = ROOT / pair["id"] / "memory"
    for f in sorted(src.rglob("*")):
        if f.is_file():
            dest = folder / f.relative_to(src).name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(f.read_bytes())
    repo = git.Repo.init(root)
    repo.git.add(A=True)
    repo.git.commit(m="memory", author="eval <eval@localhost>", env={"GIT_COMMITTER_NAME": "eval"})
    return root, project


def run(pair: dict[str, Any], work: Path, url: str) -> tuple[list[Any], Any]:
    """The real REM pass over one pair, its model answering at ``url``."""
    from dreamtui.core.dream.consolidation import run_pass
    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
    from dreamtui.core.ingest.digest import digest_session
    from dreamtui.core.ledger import Ledger
    from dreamtui.core.ledger import consolidations as rows

    root, project = lay_out(pair, work)
    digest = digest_session([ROOT / f["eval_path"] for f in pair["files"]])
    model = AnthropicExtractor(
        model="claude-sonnet-5-5", api_key="recorded", base_url=url, max_retries=0
    ).structured()
    ledger = Ledger.open(work / pair["id"] / "state")
    try:
        report = run_pass(root, ledger, project, [digest], model)
        items = [rows.get(ledger, cid) for cid in report.ids]
    finally:
        ledger.close()
    return [i for i in items if i is not None], report


def _name(path: str) -> str:
    return Path(path.split(" ")[0]).name.lower()


def score(items: list[Any], labels: dict[str, Any]) -> dict[str, Counter[str]]:
    """Right and wrong proposals per kind, and labelled `sure` changes found."""
    changes = labels.get("changes", [])
    changed = {_name(str(c["memory"])) for c in changes if c["kind"] in ("update", "retire")}
    merges = [
        {_name(str(m)) for m in (c["memory"] if isinstance(c["memory"], list) else [c["memory"]])}
        for c in changes
        if c["kind"] == "merge"
    ]
    out: dict[str, Counter[str]] = {"right": Counter(), "wrong": Counter(), "found": Counter()}
    hit_changes: set[str] = set()
    for item in items:
        names = {_name(t) for t in item.targets}
        if item.kind in ("update", "retire"):
            ok = bool(names & changed)
            hit_changes |= names & changed
        else:
            ok = any(len(names & m) >= 2 for m in merges)
        out["right" if ok else "wrong"][item.kind] += 1
    for c in changes:
        if c.get("grade") != "sure":
            continue
        out["found"]["sure"] += 1
        if c["kind"] in ("update", "retire"):
            out["found"]["hit"] += _name(str(c["memory"])) in hit_changes
        else:
            names = {_name(str(m)) for m in (c["memory"] if isinstance(c["memory"], list) else [c["memory"]])}
            out["found"]["hit"] += any(
                i.kind == "merge" and len({_name(t) for t in i.targets} & names) >= 2 for i in items
            )
    return out


def write_requests(out: Path) -> None:
    from fakes.anthropic_server import FakeAnthropic, error

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d, FakeAnthropic() as fake:
        for pair in pairs():

            def capture(body: dict[str, Any], pid: str = pair["id"]) -> Any:
                system = "\n".join(b["text"] for b in body["system"])
                user = body["messages"][0]["content"]
                schema = json.dumps(body["output_config"]["format"]["schema"], indent=1)
                (out / f"{pid}.txt").write_text(
                    f"=== SYSTEM PROMPT ===\n{system}\n=== USER MESSAGE ===\n{user}\n"
                    f"=== OUTPUT FORMAT: a JSON object matching this JSON schema ===\n{schema}\n"
                )
                (out / f"{pid}.key").write_text(request_key(body))
                return error(400, "invalid_request_error", "writing requests only", retry_after_ms=None)

            fake.responder = capture
            run(pair, Path(d), fake.url)
    print(f"{len(list(out.glob('*.txt')))} requests in {out}")


def collect(answers: Path, requests: Path) -> None:
    from dreamtui.core.extract import consolidate_prompt

    dest = DATA / "recorded" / consolidate_prompt.PROMPT_VERSION
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    for key_file in sorted(requests.glob("*.key")):
        pid = key_file.stem
        answer = answers / f"{pid}.json"
        if not answer.is_file():
            print(f"no answer for {pid}")
            continue
        record = {
            "id": pid,
            "answered_by": "a Claude model (a helper session given only the request), not a live API call",
            "key": key_file.read_text().strip(),
            "request_sha256": sha256((requests / f"{pid}.txt").read_text()),
            "answer": answer.read_text(encoding="utf-8"),
        }
        (dest / f"{pid}.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        n += 1
    print(f"{n} answers recorded under {dest}")


def replay(verbose: bool) -> None:
    from fakes.anthropic_server import FakeAnthropic, Reply, error, message

    from dreamtui.core.extract import consolidate_prompt

    recorded = DATA / "recorded" / consolidate_prompt.PROMPT_VERSION
    answers = {}
    for f in recorded.glob("*.json"):
        r = json.loads(f.read_text(encoding="utf-8"))
        answers[r["key"]] = r["answer"]
    totals: dict[str, Counter[str]] = {"right": Counter(), "wrong": Counter(), "found": Counter()}
    missing = 0
    with tempfile.TemporaryDirectory() as d, FakeAnthropic() as fake:

        def respond(body: dict[str, Any]) -> Reply:
            text = answers.get(request_key(body))
            if text is None:
                return error(400, "invalid_request_error", "no recorded answer", retry_after_ms=None)
            return Reply(200, message(text, input_tokens=0, output_tokens=0, cache_read=0))

        fake.responder = respond
        chosen = pairs()
        for pair in chosen:
            items, report = run(pair, Path(d), fake.url)
            if report.error:
                missing += 1
            labels = json.loads((DATA / "labels" / f"{pair['id']}.json").read_text(encoding="utf-8"))
            s = score(items, labels)
            for k in totals:
                totals[k].update(s[k])
            if verbose:
                print(
                    f"{pair['id']}: "
                    + ", ".join(f"{i.kind} {'+'.join(_name(t) for t in i.targets)}" for i in items)
                    or f"{pair['id']}: nothing proposed",
                    f"  (right {sum(s['right'].values())}, wrong {sum(s['wrong'].values())},"
                    f" dropped {dict(report.dropped)}{', error ' + report.error if report.error else ''})",
                )
    right, wrong = totals["right"], totals["wrong"]
    print(f"consolidation, prompt {consolidate_prompt.PROMPT_VERSION}, recorded answers: {len(chosen)} pairs")
    for kinds, label in ((("update", "retire"), "update/retire"), (("merge",), "merge")):
        r, w = sum(right[k] for k in kinds), sum(wrong[k] for k in kinds)
        p = f"{r / (r + w):.2f}" if r + w else "n/a"
        print(f"  {label:<14} precision {p}  ({r}/{r + w} proposals)")
    found = totals["found"]
    print(f"  sure changes found {found['hit']}/{found['sure']}; pairs without an answer {missing}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("requests")
    w.add_argument("out", type=Path)
    c = sub.add_parser("collect")
    c.add_argument("answers", type=Path)
    c.add_argument("requests", type=Path)
    s = sub.add_parser("score")
    s.add_argument("-v", action="store_true")
    args = ap.parse_args()
    if args.cmd == "requests":
        write_requests(args.out)
    elif args.cmd == "collect":
        collect(args.answers, args.requests)
    else:
        replay(args.v)


if __name__ == "__main__":
    main()
