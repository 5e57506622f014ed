"""Measure the consolidation pass (issue 26) on planted cases over five simulated days.

    python3 tests/bench/measure_consolidate.py [--write-requests DIR] [--answers DIR | --offline] [--json]

A project repository and a memory repository are built in a temporary folder; each day the project
changes (a commit), a session is written (its records' ``cwd`` is the project repository), and a real
full dream cycle runs at that day's ``DREAMTUI_NOW``, whose REM makes the proposals. Planted:

- day 2, **a rule reversed** (the person: no more tabs) — only a model can see it;
- day 2, **a tool replaced** (``make lint`` with flake8 becomes ``make check`` with ruff: the target
  ``lint`` leaves the Makefile) — a retire the offline finder can prove;
- day 3, **a file deleted** from the repository (``scripts/seed.py``) — retire;
- day 3, **a duplicate written by another writer** (Claude Code's auto memory writes the pool rule
  again at the top of the memory repository; the person accepted it as an outside change) — merge;
- day 4, **a file renamed** (``src/settings.py`` → ``src/config/settings.py``) — update;

and eight memories that stay true (a command that still exists, a path of another repository, a
near-duplicate with a different number, …): nothing may be proposed for them.

The offline finders run with every extractor. The model's cases need a model: ``--write-requests
DIR`` stores each day's consolidation request (``<key>.system.txt`` / ``<key>.user.txt``) for a Claude
model to answer, ``--answers DIR`` replays the answers stored verbatim (``<key>.json``) through the
real anthropic SDK against the local fake Messages API. Without answers the model's cases are
reported as not measured (nothing is invented here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECORDED = HERE.parent / "data" / "real_eval" / "consolidation" / "recorded-planted" / "consolidate-v1"
"""A Claude model's answers to the five daily requests of the shipped prompt (helper sessions given only
the request, stored verbatim)."""
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from fakes.transcript import write_session  # noqa: E402

from dreamtui.core.config import Config  # noqa: E402
from dreamtui.core.ledger import Ledger  # noqa: E402
from dreamtui.core.ledger import consolidations as rows  # noqa: E402
from dreamtui.core.memory.layout import project_folder  # noqa: E402

PROJECT = "-home-kim-shop"
FOLDER = f"projects/{project_folder(PROJECT)}"
DAYS = ["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06"]


def topic(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name}\ntype: project\n---\n\n{body}\n"


POOL = "Keep the database connection pool at 10 connections in production."
STALE = {
    "tabs.md": ("Indent with tabs", "Indent every Python file with tabs, never spaces."),
    "lint.md": ("Lint", "Run make lint (flake8) before every push."),
    "seed.md": ("Seed data", "Seed the dev database with python scripts/seed.py after a reset."),
    "pool.md": ("Pool", POOL),
    "settings.md": ("Settings", "The app settings live in src/settings.py; DEBUG stays off there."),
}
TRUE = {
    "tests.md": ("Tests", "Run the tests with make test before pushing."),
    "entry.md": ("Entry", "The app entry point is src/app.py."),
    "frontend.md": ("Frontend", "Start the frontend with npm run dev."),
    "merge.md": ("Merging", "Ask Kim before merging anything to main."),
    "env.md": ("Env files", "Never commit .env files; they hold local credentials."),
    "staging.md": ("Staging", "The staging database resets every night at midnight UTC."),
    "wiki.md": ("Wiki", "The API docs live in docs/api/overview.md of the wiki repository."),
    "pool-staging.md": ("Pool staging", "Keep the database connection pool at 20 connections on staging."),
}
PLANTED = [  # (day, case, expected kind, target, who can find it)
    (2, "a rule reversed (tabs → spaces)", "update", f"{FOLDER}/tabs.md", "model"),
    (2, "a tool replaced (make lint → make check)", "retire", f"{FOLDER}/lint.md", "offline"),
    (3, "a file deleted from the repository (scripts/seed.py)", "retire", f"{FOLDER}/seed.md", "offline"),
    (3, "a duplicate written by another writer (auto memory)", "merge", f"{FOLDER}/pool.md", "offline"),
    (
        4,
        "a file renamed (src/settings.py → src/config/settings.py)",
        "update",
        f"{FOLDER}/settings.md",
        "offline",
    ),
]
SESSIONS = {
    1: "Let's add a health endpoint to the app today and keep the pool settings as they are for now please.",
    2: (
        "Change of plan on formatting: we are not using tabs any more, indent every Python file with four "
        "spaces from now on. And we switched from flake8 to ruff, so the lint step is make check now."
    ),
    3: "I deleted the old seed script, the fixtures load themselves now when the tests start, nice and simple.",
    4: "I moved the settings module into src/config/ so the configuration lives together in one place now.",
    5: "Just tidying the README today, nothing else changes in the code or the tooling this time around.",
}


def sh(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def commit(repo: Path, day: str, message: str) -> None:
    sh(repo, "add", "-A")
    env = {"GIT_AUTHOR_DATE": f"{day}T12:00:00Z", "GIT_COMMITTER_DATE": f"{day}T12:00:00Z"}
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", message],
        check=True,
        capture_output=True,
        env={**os.environ, **env},
    )


def build(base: Path) -> tuple[Config, Path]:
    repo = base / "shop"
    (repo / "src").mkdir(parents=True)
    (repo / "scripts").mkdir()
    sh(repo, "init", "-q", "-b", "main")
    (repo / "src" / "app.py").write_text("print('shop')\n")
    (repo / "src" / "settings.py").write_text("DEBUG = False\nPOOL = 10\n")
    (repo / "scripts" / "seed.py").write_text("print('seeding')\n")
    (repo / "Makefile").write_text("lint:\n\tflake8 src\n\ntest:\n\tpytest\n")
    (repo / "package.json").write_text(json.dumps({"scripts": {"dev": "vite", "build": "vite build"}}))
    commit(repo, DAYS[0], "the shop")
    memory = base / "memory"
    memory.mkdir()
    sh(memory, "init", "-q", "-b", "main")
    index = ["# Memory"]
    for rel, (name, body) in {**STALE, **TRUE}.items():
        path = memory / FOLDER / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(topic(name, body))
        index.append(f"- [{name}]({FOLDER}/{rel}) — {name.lower()}")
    (memory / "MEMORY.md").write_text("\n".join(index) + "\n")
    commit(memory, DAYS[0], "memories of the first day")
    (base / "transcripts").mkdir()
    config = Config(
        transcripts=base / "transcripts", memory=memory, state=base / "state", extractor="heuristic"
    )
    return config, repo


def change_for(day: int, repo: Path, memory: Path) -> None:
    """What happens on ``day`` outside the sessions: commits to the project, another writer's memory."""
    stamp = DAYS[day - 1]
    if day == 2:
        (repo / "Makefile").write_text("check:\n\truff check src\n\ntest:\n\tpytest\n")
        commit(repo, stamp, "ruff replaces flake8")
    elif day == 3:
        (repo / "scripts" / "seed.py").unlink()
        commit(repo, stamp, "fixtures load themselves")
        (memory / "db-pool.md").write_text(topic("DB pool", POOL))  # Claude Code's auto memory, at the top
        with (memory / "MEMORY.md").open("a") as fh:
            fh.write("- [DB pool](db-pool.md) — pool size\n")
        commit(memory, stamp, "auto memory: db-pool (accepted as an outside change)")
    elif day == 4:
        (repo / "src" / "config").mkdir()
        sh(repo, "mv", "src/settings.py", "src/config/settings.py")
        commit(repo, stamp, "settings under src/config")


def session(config: Config, day: int, repo: Path) -> None:
    stamp = DAYS[day - 1]
    text = SESSIONS[day]
    path = write_session(
        config.transcripts,
        [("person", text), ("assistant", "Done.")],
        project=PROJECT,
        session=f"{day:08d}-0000-4000-8000-000000000000",
    )
    raw = path.read_text().replace('"cwd":"/home/kim/shop"', f'"cwd":{json.dumps(str(repo))}')
    raw = raw.replace("2026-11-29T10:", f"{stamp}T10:")
    path.write_text(raw)
    when = _epoch(f"{stamp}T11:00:00Z")
    os.utime(path, (when, when))


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class Model:
    """The anthropic extractor against the local fake Messages API, answering the consolidation request
    from recorded answers (``<key>.json``) and storing each request (``--write-requests``)."""

    def __init__(self, answers: Path | None, requests: Path | None) -> None:
        from fakes.anthropic_server import FakeAnthropic, Reply, message

        from dreamtui.core.extract.consolidate_prompt import SYSTEM_PROMPT

        self.answers, self.requests, self.asked, self.answered = answers, requests, 0, 0
        self.server = FakeAnthropic()

        def respond(body: Any) -> Reply:
            system = body.get("system")
            system = (
                "".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system or "")
            )
            content = body["messages"][0]["content"]
            user = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
            if system != SYSTEM_PROMPT:  # the lesson extraction and the dedup judge: nothing to say here
                return Reply(200, message({"candidates": [], "verdicts": []}))
            self.asked += 1
            key = hashlib.sha256(user.encode()).hexdigest()[:16]
            if self.requests is not None:
                self.requests.mkdir(parents=True, exist_ok=True)
                (self.requests / f"{key}.system.txt").write_text(system)
                (self.requests / f"{key}.user.txt").write_text(user)
            recorded = self.answers / f"{key}.json" if self.answers else None
            if recorded is not None and recorded.is_file():
                self.answered += 1
                return Reply(200, message(recorded.read_text()))
            return Reply(200, message({"proposals": []}))

        self.server.responder = respond

    def __enter__(self) -> Model:
        self.server.__enter__()
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
        os.environ["ANTHROPIC_BASE_URL"] = self.server.url
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)


def run(answers: Path | None, requests: Path | None) -> dict[str, Any]:

    from dreamtui.core.dream.run import run_cycle

    with tempfile.TemporaryDirectory(prefix="dreamtui-consolidate-") as tmp:
        base = Path(tmp)
        os.environ["HOME"] = str(base)
        os.environ["GIT_CONFIG_GLOBAL"] = str(base / "gitconfig")
        (base / "gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        config, repo = build(base)
        model = Model(answers, requests) if (answers or requests) else None
        if model is not None:
            config = config.changed(extractor="anthropic", max_retries=0, api_timeout=10.0)
            model.__enter__()
        try:
            ledger = Ledger.open(config.state)
            per_day = []
            for day in range(1, len(DAYS) + 1):
                change_for(day, repo, config.memory)
                session(config, day, repo)
                os.environ["DREAMTUI_NOW"] = f"{DAYS[day - 1]}T23:00:00Z"
                record = run_cycle(config, ledger)
                per_day.append(
                    {"day": day, "cycle": record.id, "status": record.status, **record.stats.consolidation}
                )
            made = rows.listed(ledger, None)
        finally:
            if model is not None:
                model.__exit__(None, None, None)
    cycle_day = {d["cycle"]: d["day"] for d in per_day}
    true_paths = {f"{FOLDER}/{rel}" for rel in TRUE}
    cases = []
    for day, case, kind, target, who in PLANTED:
        hit = next((m for m in made if m.kind == kind and target in m.targets), None)
        measured = who == "offline" or (model is not None and model.answered > 0)
        cases.append(
            {
                "day": day,
                "case": case,
                "expected": f"{kind} {target.rsplit('/', 1)[-1]}",
                "finder": who,
                "measured": measured,
                "found": hit is not None,
                "on_day": cycle_day.get(hit.cycle_id) if hit and hit.cycle_id else None,
                "evidence": hit.evidence if hit else None,
            }
        )
    false = [m for m in made if set(m.targets) & true_paths]
    wrong = [m for m in made if not any(m.kind == k and t in m.targets for _, _, k, t, _ in PLANTED)]
    offline = [c for c in cases if c["finder"] == "offline"]
    return {
        "days": per_day,
        "cases": cases,
        "offline_found": sum(c["found"] for c in offline),
        "offline_planted": len(offline),
        "model_found": sum(c["found"] for c in cases if c["finder"] == "model"),
        "model_measured": bool(model is not None and model.answered),
        "proposals": len(made),
        "false_on_true_memories": len(false),
        "true_memories": len(TRUE),
        "not_planted": [f"{m.kind} {', '.join(m.targets)}: {m.evidence}" for m in wrong],
        "model_requests": model.asked if model else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--answers",
        type=Path,
        default=RECORDED,
        help="Recorded model answers (<key>.json); default: the ones stored for the shipped prompt.",
    )
    parser.add_argument("--offline", action="store_true", help="No model: the offline finders only.")
    parser.add_argument(
        "--write-requests", type=Path, default=None, help="Store each consolidation request here."
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    answers = None if args.offline or not (args.answers and args.answers.is_dir()) else args.answers
    out = run(answers, args.write_requests)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for c in out["cases"]:
        mark = (
            ("found" if c["found"] else "MISSED") if c["measured"] else "not measured (no recorded answers)"
        )
        when = f" on day {c['on_day']}" if c["on_day"] else ""
        print(f"day {c['day']}  {c['case']:<58} {c['expected']:<22} {c['finder']:<8} {mark}{when}")
        if c["evidence"]:
            print(f"        evidence: {c['evidence']}")
    print(
        f"offline: {out['offline_found']}/{out['offline_planted']} planted cases found; "
        f"model: {out['model_found']}/1 ({'measured' if out['model_measured'] else 'not measured'}); "
        f"proposals on the {out['true_memories']} memories still true: {out['false_on_true_memories']}; "
        f"proposals nobody planted: {len(out['not_planted'])}"
    )
    for line in out["not_planted"]:
        print(f"  not planted: {line}")
    for d in out["days"]:
        print(
            f"  day {d['day']}: cycle #{d['cycle']} {d['status']}: {d['update']} update, {d['retire']} retire, {d['merge']} merge"
        )


if __name__ == "__main__":
    main()
