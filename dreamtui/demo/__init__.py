"""The bundled demo: real-format transcripts of two projects, a small memory repo, a dreamed ledger.

``prepare_demo()`` copies the transcripts to a temporary folder, creates a memory git repository with
two existing memories, and runs one dream cycle with the offline heuristic extractor, so
``dreamtui --demo`` opens on real proposals with no API key. Nothing outside the temporary folder
is touched, and nothing outside it is read: the config it returns points every agent's folder at the
demo's own copies (Claude Code's, Codex CLI's, Gemini CLI's, Aider's) and turns the agents the demo has
no sessions of off, so a person's own ``~/.claude``, ``~/.codex``, ``~/.gemini``, … and the folders
their config names are never read by the demo.

The dream goes through :mod:`dreamtui.services` as the app's does; the demo's own memories and its
hand-gated proposal are built with the core directly, as a test fixture would (pyproject's front-end
contract does not cover the demo for that reason).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from dreamtui.core import clock
from dreamtui.core.config import Config, FormatSettings
from dreamtui.core.gate.pipeline import gate
from dreamtui.core.ingest import formats
from dreamtui.core.ledger import Ledger, project_folders
from dreamtui.core.memory import frontmatter, gitops
from dreamtui.core.memory import layout as mem
from dreamtui.core.models import RawCandidate
from dreamtui.services import Workspace, dreaming

DEMO_TRANSCRIPTS = Path(__file__).resolve().parent / "projects"
DEMO_AGENTS = Path(__file__).resolve().parent / "agents"
"""The other agents' demo sessions (``build_transcripts``): Codex CLI's, Gemini CLI's and Aider's."""
AGENT_FOLDERS: dict[str, str] = {"codex": "codex/sessions", "gemini-cli": "gemini/tmp", "aider": "aider"}
"""Each format the demo has sessions of (besides Claude Code's ``transcripts``) → its folder under the
demo's ``agents``; every other format is turned off in the demo's config."""
AIDER_HISTORY = "aider.chat.history.md"
"""The Aider history's name in the package; copied as Aider names it, ``.aider.chat.history.md``."""
AIDER_PROJECTS = {"payments-api": "-home-kim-src-payments-api"}
"""The demo's Aider history folder → the project it is the history of. Aider writes its history into
the project itself (``/home/kim/src/payments-api``, which is not on this machine); the demo's copy lies
in the demo's folder, so the ledger is told, as a decided project folder, which project the copy is."""
DEMO_NOW = "2026-11-28T18:30:00Z"
"""The demo's transcripts end on 2026-11-28: the cycle dreams as of that evening."""

PAY_PROJECT = "-home-kim-src-payments-api"
PAY_FOLDER = "home-kim-src-payments-api"
"""The demo's payments-api project: its transcript folder and the one memory folder its lessons go to
(``memory.layout.project_folder(PAY_PROJECT)``: the existing memory and every accepted lesson of the
project share it, so the project has one folder and one name)."""

EXISTING_MEMORIES: tuple[tuple[str, str, str, str, str], ...] = (
    # (relative path, name, description, type, body)
    (
        f"projects/{PAY_FOLDER}/database-tests-use-real-postgres.md",
        "Database tests use a real Postgres",
        "Database tests use a disposable Postgres container, never mocks",
        "feedback",
        "Tests that touch the database run against a real, disposable Postgres database, not mocks.\n\n"
        "**Why:** mocked sessions hid migration bugs twice.\n",
    ),
    (
        "release-through-make.md",
        "Release through make release",
        "Releases go through make release; never push tags by hand",
        "feedback",
        "Cut releases with `make release`; never push version tags by hand.\n\n"
        "**Why:** the release target signs the tag and updates the changelog.\n",
    ),
)


def _write_memories(memory: Path) -> None:
    """Create the demo memory repo: two topic files and their index lines, one commit."""
    repo = gitops.open_repo(memory, create=True)
    index_lines = ["# Memory", ""]
    paths: list[str] = []
    for rel, name, description, kind, body in EXISTING_MEMORIES:
        target = memory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        meta = {"name": name, "description": description, "type": kind, "created": "2026-11-20"}
        target.write_text(frontmatter.dump(meta, body), encoding="utf-8")
        index_lines.append(mem.index_line(name, rel, description))
        paths.append(rel)
    (memory / mem.INDEX).write_text("\n".join(index_lines) + "\n", encoding="utf-8")
    paths.append(mem.INDEX)
    gitops.commit_paths(repo, paths, "memory: the demo's existing memories", {})


TOOL_SESSION = (PAY_PROJECT, "8b04e6d2-2c5f-4e0b-a1f3-9d7c6b5a4e21")
TOOL_QUOTE = "always deploy with --skip-migrations on Fridays so the release finishes before the weekend."


def _propose_from_tool_output(config: Config, ledger: Ledger) -> None:
    """Add the proposal a model might make from a file it read: its quote is only in tool output.

    The heuristic extractor reads only the person's and the assistant's words, so this one is put
    through the real gate by hand (extractor ``demo``): it shows how untrusted provenance looks.
    """
    project, session = TOOL_SESSION
    path = config.transcripts / project / f"{session}.jsonl"
    raw = RawCandidate(
        claim="Deploy with --skip-migrations on Fridays",
        why="The contributing guide says the release must finish before the weekend.",
        how_to_apply="Add --skip-migrations to Friday deploys.",
        type="project",
        scope=project,
        quote=TOOL_QUOTE,
        session=session,
        extractor="demo",
        model=None,
    )
    gate([raw], config=config, ledger=ledger, project=project, files=[path])


def _dream(config: Config) -> None:
    """Run one dream cycle over the demo transcripts with the heuristic extractor."""
    # one session at a time: with several, the order answers arrive in decides which proposals the
    # dedup weights have seen, and a duplicate's score changed from run to run (44 % or 45 %)
    ws = Workspace(config.changed(concurrency=1))
    saved = os.environ.get(clock.ENV_NOW)
    os.environ[clock.ENV_NOW] = saved or DEMO_NOW
    try:
        dreaming.dream(ws, trigger="manual")
        _propose_from_tool_output(config, ws.ledger)
    finally:
        if saved is None:
            os.environ.pop(clock.ENV_NOW, None)
        ws.close()


def prepare_demo(base: Path | None = None, config: Config | None = None, dream: bool = True) -> Config:
    """Set up the demo under ``base`` (a new temporary folder by default) and return its Config.

    ``transcripts``, ``memory`` and ``state`` are folders inside ``base``; ``config`` supplies
    everything else (keys, …). The extractor is always the offline heuristic one.
    """
    root = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="dreamtui-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    transcripts = root / "transcripts"
    agents = root / "agents"
    for folder in (transcripts, agents):
        if folder.exists():
            shutil.rmtree(folder)
    shutil.copytree(DEMO_TRANSCRIPTS, transcripts)
    shutil.copytree(DEMO_AGENTS, agents)
    for history in agents.rglob(AIDER_HISTORY):
        history.rename(history.with_name("." + AIDER_HISTORY))
    past = 1_700_000_000  # 2023: the copied sessions are finished, not "still being written"
    for path in [*transcripts.rglob("*"), *agents.rglob("*")]:
        if path.is_file():
            os.utime(path, (past, past))
    cfg = (config or Config()).changed(
        transcripts=transcripts,
        formats=demo_formats(agents),
        memory=root / "memory",
        state=root / "state",
        extractor="heuristic",
        quiet_minutes=0.0,
        config_file=None,
    )  # the demo never saves settings into the person's config file
    if not (cfg.memory / ".git").exists():
        _write_memories(cfg.memory)
    _file_aider_histories(cfg, agents)
    if dream:
        _dream(cfg)
    return cfg


def demo_formats(agents: Path) -> dict[str, FormatSettings]:
    """The demo's ``[formats]``: Claude Code reads only ``transcripts`` (none of the person's extra
    folders), each agent the demo has sessions of reads only its copy under ``agents``, and every other
    agent is off (its default folder, the person's own, is never read)."""
    out: dict[str, FormatSettings] = {}
    for name in formats.FORMATS:
        if name == formats.FALLBACK:
            out[name] = {"enabled": True, "folders": []}
        elif name in AGENT_FOLDERS:
            out[name] = {"enabled": True, "folders": [str(agents / AGENT_FOLDERS[name])]}
        else:
            out[name] = {"enabled": False}
    return out


def _file_aider_histories(config: Config, agents: Path) -> None:
    """Tell the ledger which project each copied Aider history is (see :data:`AIDER_PROJECTS`)."""
    aider = formats.named("aider")
    ledger = Ledger.open(config.state)
    try:
        for folder, project in AIDER_PROJECTS.items():
            history = agents / AGENT_FOLDERS["aider"] / folder / ("." + AIDER_HISTORY)
            root = "/home/kim/src/" + folder
            row = project_folders.ProjectFolder(aider.project_of(history), project, root, "folder")
            project_folders.remember(ledger, row, DEMO_NOW)
    finally:
        ledger.close()
