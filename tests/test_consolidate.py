"""Consolidation (issue 26): the offline finders on real git repositories, and accept / reject / undo of
update, retire and merge proposals as one commit each, against a real memory repository and ledger."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import git
import pytest
from fakes.cli_world import folder_args
from fakes.gitrepo import git as sh

from dreamtui.core.config import Config
from dreamtui.core.dream import consolidate_find as find
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger import consolidations as rows
from dreamtui.core.memory import consolidate
from dreamtui.core.memory.layout import project_folder

PROJECT = "-home-kim-shop"
FOLDER = f"projects/{project_folder(PROJECT)}"
NOW = "2026-04-02T09:00:00Z"


@pytest.fixture(autouse=True)
def _home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)


def topic(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name}\ntype: project\n---\n\n{body}\n"


def memory_repo(config: Config, files: dict[str, str]) -> Path:
    """The memory repository with ``files`` (rel → text) and their index lines, committed."""
    root = config.memory
    root.mkdir(parents=True, exist_ok=True)
    sh(root.parent, "init", "-q", "-b", "main", str(root))
    index = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        index.append(f"- [{rel.rsplit('/', 1)[-1][:-3]}]({rel}) — hook")
    (root / "MEMORY.md").write_text("# Memory\n" + "\n".join(index) + "\n", encoding="utf-8")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "memories")
    return root


def project_repo(tmp_path: Path) -> Path:
    """A project repository whose history had ``src/settings.py``, a ``lint`` script and a ``make
    deploy`` target, all gone at HEAD, and ``lib/old.py`` renamed to ``lib/new.py``."""
    repo = tmp_path / "shop"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "lib").mkdir()
    (repo / "src" / "settings.py").write_text("DEBUG = False\n")
    (repo / "src" / "app.py").write_text("print('hi')\n")
    (repo / "lib" / "old.py").write_text("def helper():\n    return 42\n" * 5)
    (repo / "package.json").write_text(json.dumps({"scripts": {"lint": "eslint .", "test": "vitest"}}))
    (repo / "Makefile").write_text("deploy:\n\t./deploy.sh\n\nbuild:\n\tcc main.c\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "first")
    (repo / "src" / "settings.py").unlink()
    sh(repo, "mv", "lib/old.py", "lib/new.py")
    (repo / "package.json").write_text(json.dumps({"scripts": {"check": "biome check", "test": "vitest"}}))
    (repo / "Makefile").write_text("build:\n\tcc main.c\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "second")
    return repo


TRUE_ONES = {
    f"{FOLDER}/app-entry.md": topic(
        "App entry", "The entry point is `src/app.py`; run it with python src/app.py."
    ),
    f"{FOLDER}/tests.md": topic("Tests", "Run the tests with npm run test before pushing."),
    f"{FOLDER}/build.md": topic("Build", "Build with make build; never edit the generated files."),
    f"{FOLDER}/elsewhere.md": topic(
        "Docs", "The API docs live in docs/api/overview.md of the wiki repository."
    ),
}


def store(ledger: Ledger, items: list[rows.Consolidation]) -> list[rows.Consolidation]:
    return [i for i in items if rows.add(ledger, i)]


# -- the finders ---------------------------------------------------------------------------------------


def test_nothing_is_proposed_for_memories_still_true(config: Config, tmp_path: Path) -> None:
    root = memory_repo(config, TRUE_ONES)
    repo = project_repo(tmp_path)
    assert find.find_offline(root, PROJECT, repo) == []


def test_a_deleted_file_a_removed_script_and_make_target_are_retired_with_the_failed_check(
    config: Config, tmp_path: Path
) -> None:
    gone = {
        f"{FOLDER}/settings.md": topic("Settings", "The settings live in src/settings.py; DEBUG stays off."),
        f"{FOLDER}/lint.md": topic("Lint", "Always run npm run lint before committing."),
        f"{FOLDER}/deploy.md": topic("Deploy", "Deploy with make deploy from the main branch."),
    }
    root = memory_repo(config, {**TRUE_ONES, **gone})
    repo = project_repo(tmp_path)
    found = {i.targets[0]: i for i in find.find_offline(root, PROJECT, repo)}
    assert set(found) == set(gone)
    assert all(i.kind == "retire" and i.evidence_kind == "check" for i in found.values())
    head = sh(repo, "rev-parse", "--short=7", "HEAD").strip()
    settings = found[f"{FOLDER}/settings.md"].evidence
    assert settings.startswith(f"path src/settings.py named in memory {FOLDER}/settings.md does not exist")
    assert f"in repository shop at HEAD ({head})" in settings
    assert "no script 'lint'" in found[f"{FOLDER}/lint.md"].evidence
    assert "no target 'deploy'" in found[f"{FOLDER}/deploy.md"].evidence


def test_a_global_memory_is_never_retired_by_one_projects_repository(config: Config, tmp_path: Path) -> None:
    root = memory_repo(config, {"settings.md": topic("Settings", "The settings live in src/settings.py.")})
    assert find.find_offline(root, PROJECT, project_repo(tmp_path)) == []  # another project may still have it


def test_a_renamed_file_is_an_update_naming_the_new_path(config: Config, tmp_path: Path) -> None:
    rel = f"{FOLDER}/helper.md"
    root = memory_repo(config, {rel: topic("Helper", "The helper lives in lib/old.py and returns 42.")})
    [item] = find.find_offline(root, PROJECT, project_repo(tmp_path))
    assert item.kind == "update" and item.keep_path == rel
    assert "renamed to lib/new.py" in item.evidence
    assert "The helper lives in lib/new.py and returns 42." in (item.new_text or "")


def test_exact_and_lexical_duplicates_are_one_merge_and_distinct_specifics_are_not(config: Config) -> None:
    mine = f"{FOLDER}/pool.md"
    theirs = "pool-size.md"  # written at the top by another writer (Claude Code's auto memory)
    other = f"{FOLDER}/pool-staging.md"
    root = memory_repo(
        config,
        {
            mine: topic("Pool", "Keep the database connection pool at 10 connections in production."),
            theirs: topic("Pool size", "keep the database  connection pool at 10 connections in production."),
            other: topic(
                "Pool staging", "Keep the database connection pool at 20 connections in production."
            ),
        },
    )
    [item] = find.find_offline(root, PROJECT)
    assert item.kind == "merge" and sorted(item.targets) == sorted([mine, theirs])
    assert "the same text" in item.evidence


# -- decisions -----------------------------------------------------------------------------------------


def test_accepting_a_retirement_commits_exactly_the_deletion_and_its_index_line_and_undo_brings_it_back(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    rel = f"{FOLDER}/settings.md"
    root = memory_repo(
        config,
        {**TRUE_ONES, rel: topic("Settings", "The settings live in src/settings.py; DEBUG stays off.")},
    )
    (root / "notes.txt").write_text("my own unstaged work\n")
    [item] = store(ledger, find.find_offline(root, PROJECT, project_repo(tmp_path)))
    diff = consolidate.diff_lines(item, root)
    assert f"--- a/{rel}" in diff and "+++ /dev/null" in diff
    assert any(line.startswith("-- [settings]") for line in diff)
    assert (root / rel).exists()  # nothing deleted before the accept
    result = consolidate.accept(config, ledger, item.id)
    repo = git.Repo(root)
    assert repo.head.commit.hexsha == result.commit_sha
    assert sorted(gitops_changed(root, result.commit_sha)) == sorted(["MEMORY.md", rel])
    assert f"Dreamtui-Consolidation: {item.id}" in repo.head.commit.message
    assert not (root / rel).exists() and "settings.md" not in (root / "MEMORY.md").read_text()
    assert (root / "notes.txt").read_text() == "my own unstaged work\n"
    assert rows.get(ledger, item.id).status == "accepted"  # type: ignore[union-attr]
    undone = consolidate.undo(config, ledger, item.id)
    assert (root / rel).read_text().startswith("---\nname: Settings")
    assert "settings.md" in (root / "MEMORY.md").read_text()
    assert repo.head.commit.hexsha == undone.commit_sha
    assert rows.get(ledger, item.id).status == "undone"  # type: ignore[union-attr]


def gitops_changed(root: Path, sha: str) -> list[str]:
    return [p for p in sh(root, "diff-tree", "--no-commit-id", "-r", "--name-only", sha).split("\n") if p]


def test_merge_keeps_one_file_and_updates_the_index(config: Config, ledger: Ledger) -> None:
    a, b = f"{FOLDER}/pool.md", "pool-size.md"
    body = "Keep the database connection pool at 10 connections in production."
    root = memory_repo(config, {a: topic("Pool", body), b: topic("Pool size", body)})
    [item] = store(ledger, find.find_offline(root, PROJECT))
    consolidate.accept(config, ledger, item.id)
    index = (root / "MEMORY.md").read_text()
    kept, gone = (a, b) if item.keep_path == a else (b, a)
    assert (root / kept).exists() and not (root / gone).exists()
    assert f"({kept})" in index and f"({gone})" not in index


def test_an_update_rewrites_the_file_and_its_index_line(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    rel = f"{FOLDER}/helper.md"
    root = memory_repo(config, {rel: topic("Helper", "The helper lives in lib/old.py and returns 42.")})
    [item] = store(ledger, find.find_offline(root, PROJECT, project_repo(tmp_path)))
    consolidate.accept(config, ledger, item.id)
    assert "lib/new.py" in (root / rel).read_text() and "modified:" in (root / rel).read_text()
    assert f"({rel})" in (root / "MEMORY.md").read_text()


def test_a_rejection_is_remembered_by_its_evidence(config: Config, ledger: Ledger, tmp_path: Path) -> None:
    rel = f"{FOLDER}/settings.md"
    root = memory_repo(config, {rel: topic("Settings", "The settings live in src/settings.py.")})
    repo = project_repo(tmp_path)
    [item] = store(ledger, find.find_offline(root, PROJECT, repo))
    consolidate.reject(ledger, item.id, "it is still true for the old branch")
    assert store(ledger, find.find_offline(root, PROJECT, repo)) == []  # same evidence: never again
    (repo / "README.md").write_text("the shop\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "later work")  # HEAD moves on; the proof (deleted in …) stays the same
    assert store(ledger, find.find_offline(root, PROJECT, repo)) == []
    assert rows.get(ledger, item.id).decision_reason == "it is still true for the old branch"  # type: ignore[union-attr]


def test_accept_refuses_a_target_changed_since_and_auto_never_retires(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    rel = f"{FOLDER}/settings.md"
    root = memory_repo(config, {rel: topic("Settings", "The settings live in src/settings.py.")})
    [item] = store(ledger, find.find_offline(root, PROJECT, project_repo(tmp_path)))
    with pytest.raises(consolidate.ConsolidationError, match="only a person can accept a retirement"):
        consolidate.accept(config, ledger, item.id, decided_by="auto")
    (root / rel).write_text(topic("Settings", "The settings now live in config/settings.toml."))
    with pytest.raises(consolidate.ConsolidationError, match="changed since this was proposed"):
        consolidate.accept(config, ledger, item.id)
    assert (root / rel).exists() and rows.get(ledger, item.id).status == "pending"  # type: ignore[union-attr]


def test_accept_refuses_uncommitted_index_changes(config: Config, ledger: Ledger, tmp_path: Path) -> None:
    rel = f"{FOLDER}/settings.md"
    root = memory_repo(config, {rel: topic("Settings", "The settings live in src/settings.py.")})
    [item] = store(ledger, find.find_offline(root, PROJECT, project_repo(tmp_path)))
    with (root / "MEMORY.md").open("a") as fh:
        fh.write("- my own line\n")
    with pytest.raises(MemoryRepoError, match="MEMORY.md has uncommitted changes"):
        consolidate.accept(config, ledger, item.id)
    assert (root / rel).exists() and "- my own line" in (root / "MEMORY.md").read_text()


# -- the model pass (the real anthropic SDK against the local fake Messages API) -------------------------

SAID = (
    "Change of plan: we are not using tabs any more, please indent with four spaces everywhere from now on. "
    "Also the staging deploy now goes through the GitHub Actions workflow, not the old fabric script."
)
Q_SPACES = "we are not using tabs any more, please indent with four spaces everywhere from now on"


def model_world(config: Config, server: object) -> tuple[Path, object, list[object]]:
    from fakes.transcript import write_session

    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
    from dreamtui.core.ingest.digest import digest_session

    root = memory_repo(
        config,
        {
            f"{FOLDER}/tabs.md": topic("Indent with tabs", "Indent every file with tabs, never spaces."),
            f"{FOLDER}/deploy.md": topic("Deploy", "Deploy staging with the fabric script fab deploy."),
            f"{FOLDER}/review.md": topic("Review", "Ask Kim for a review before merging to main."),
        },
    )
    path = write_session(
        config.transcripts, [("person", SAID), ("assistant", "Understood.")], project=PROJECT
    )
    extractor = AnthropicExtractor(
        model="claude-sonnet-5-5",
        api_key="sk-ant-test",
        base_url=server.url,
        max_retries=0,  # type: ignore[attr-defined]
    )
    return root, extractor.structured(), [digest_session([path])]


def test_the_model_pass_keeps_verified_updates_and_drops_invented_quotes(
    config: Config, ledger: Ledger
) -> None:
    from fakes.anthropic_server import FakeAnthropic, Reply, message

    from dreamtui.core.dream.consolidation import run_pass
    from dreamtui.core.extract.consolidate_prompt import SYSTEM_PROMPT

    with FakeAnthropic() as server:
        root, structured, digests = model_world(config, server)
        new_body = "Indent every file with four spaces, never tabs."
        answer = {
            "proposals": [
                {
                    "kind": "update",
                    "memories": [3],
                    "quote": Q_SPACES,
                    "new_text": new_body,
                    "reason": "reversed",
                },
                {
                    "kind": "retire",
                    "memories": [2],
                    "quote": "Kim left the team last week",
                    "reason": "invented",
                },
                {"kind": "merge", "memories": [7, 1], "new_text": "x", "reason": "out of range"},
            ]
        }
        server.script.append(Reply(200, message(answer)))
        report = run_pass(root, ledger, PROJECT, digests, structured)  # type: ignore[arg-type]
        [req] = server.calls()
    system = req.body["system"]
    assert (system[0]["text"] if isinstance(system, list) else system) == SYSTEM_PROMPT
    sent = req.body["messages"][0]["content"]
    sent = sent if isinstance(sent, str) else sent[0]["text"]
    assert f'<memory n="3" path="{FOLDER}/tabs.md">' in sent  # the memories in path order
    assert "Indent every file with tabs" in sent and Q_SPACES in sent
    assert report.proposed == {"update": 1} and report.dropped == {"unverified": 1, "invalid": 1}
    [item] = rows.listed(ledger)
    assert item.kind == "update" and item.evidence_kind == "quote" and item.evidence == Q_SPACES
    assert item.provenance == "person" and item.line == 1 and item.source == "anthropic/claude-sonnet-5-5"
    consolidate.accept(config, ledger, item.id)
    text = (root / f"{FOLDER}/tabs.md").read_text()
    assert new_body in text and "never spaces" not in text


def test_a_local_model_behind_an_openai_compatible_server_proposes_through_the_same_pass(
    config: Config, ledger: Ledger
) -> None:
    """A small local model wraps its JSON in a fence: the openai extractor's lenient reading takes it."""
    from fakes.openai_server import FakeOpenAI, says
    from fakes.transcript import write_session

    from dreamtui.core.dream.consolidation import run_pass
    from dreamtui.core.extract.openai_ext import OpenAIExtractor
    from dreamtui.core.ingest.digest import digest_session

    root = memory_repo(
        config, {f"{FOLDER}/tabs.md": topic("Indent with tabs", "Indent every file with tabs.")}
    )
    path = write_session(
        config.transcripts, [("person", SAID), ("assistant", "Understood.")], project=PROJECT
    )
    answer = {
        "proposals": [
            {"kind": "update", "memories": [1], "quote": Q_SPACES, "new_text": "Indent with four spaces."}
        ]
    }
    with FakeOpenAI() as server:
        server.script.append(says("```json\n" + json.dumps(answer) + "\n```"))
        structured = OpenAIExtractor(base_url=server.url, model="qwen3:4b", max_retries=0).structured()
        report = run_pass(root, ledger, PROJECT, [digest_session([path])], structured)
    assert report.proposed == {"update": 1}, report
    [item] = rows.listed(ledger)
    assert item.source == "openai/qwen3:4b" and item.evidence == Q_SPACES


def test_a_failing_model_leaves_the_offline_proposals(config: Config, ledger: Ledger) -> None:
    from fakes.anthropic_server import FakeAnthropic, error

    from dreamtui.core.dream.consolidation import run_pass

    with FakeAnthropic() as server:
        root, structured, digests = model_world(config, server)
        dup = (root / f"{FOLDER}/tabs.md").read_text()
        (root / "tabs-too.md").write_text(dup)  # an exact duplicate another writer made
        server.script.append(error(400, "invalid_request_error", "bad request"))
        report = run_pass(root, ledger, PROJECT, digests, structured)  # type: ignore[arg-type]
    assert report.error and "bad request" in report.error
    assert report.proposed == {"merge": 1}


def test_a_full_cycle_proposes_in_rem_and_the_waking_message_counts_per_kind(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from fakes.cycle_world import ACME, NOW, RULES, install

    from dreamtui.core.dream.run import run_cycle
    from dreamtui.core.dream.waking import waking_message

    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    config = config.changed(extractor="command", command=(sys.executable, str(RULES)))
    folder = f"projects/{project_folder(ACME)}"
    body = "Keep the database connection pool at 10 connections in production."
    memory_repo(config, {f"{folder}/pool.md": topic("Pool", body), "pool-size.md": topic("Pool size", body)})
    install(config, "busy")
    record = run_cycle(config, ledger, project=ACME)
    assert record.stats.consolidation == {"update": 0, "retire": 0, "merge": 1}
    message = waking_message(record)
    assert "Consolidation: 0 update, 0 retire, 1 merge proposed for review" in message
    [item] = rows.listed(ledger)
    assert item.cycle_id == record.id and item.project == ACME


# -- the CLI -------------------------------------------------------------------------------------------


def cli_run(config: Config, *args: str):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from dreamtui.cli.main import cli

    base = [
        *folder_args(config),
    ]
    return CliRunner().invoke(cli, [*base, *args])


def test_the_cli_runs_lists_shows_accepts_and_undoes(config: Config, tmp_path: Path) -> None:
    rel = f"{FOLDER}/settings.md"
    root = memory_repo(config, {**TRUE_ONES, rel: topic("Settings", "The settings live in src/settings.py.")})
    repo = project_repo(tmp_path)
    ran = cli_run(config, "consolidate", "run", "--project", PROJECT, "--repo", str(repo))
    assert ran.exit_code == 0, ran.output
    assert f"{PROJECT}: 0 update, 1 retire, 0 merge proposed" in ran.output
    again = cli_run(config, "consolidate", "run", "--project", PROJECT, "--repo", str(repo))
    assert "0 retire" in again.output and "1 already proposed before" in again.output
    (root / "briefing.md").write_text("# Briefing\n")
    told = cli_run(config, "briefing")
    assert "consolidation proposals wait for review (0 update, 1 retire, 0 merge)" in told.stderr
    listed = json.loads(cli_run(config, "consolidate", "--json").output)
    [item] = listed
    assert item["kind"] == "retire" and item["targets"] == [rel]
    shown = cli_run(config, "consolidate", "show", item["id"][:6])
    assert shown.exit_code == 0, shown.output
    assert "evidence (check):" in shown.output and "does not exist in repository shop" in shown.output
    assert f"--- a/{rel}" in shown.output and "+++ /dev/null" in shown.output
    assert (root / rel).exists()
    accepted = cli_run(config, "consolidate", "accept", item["id"])
    assert accepted.exit_code == 0 and "retire accepted" in accepted.output
    assert not (root / rel).exists()
    assert cli_run(config, "consolidate").output.strip() == "no consolidation proposals"
    undone = cli_run(config, "consolidate", "undo", item["id"])
    assert undone.exit_code == 0 and "undone" in undone.output and (root / rel).exists()
    missing = cli_run(config, "consolidate", "accept", "nope")
    assert missing.exit_code == 2 and "no consolidation proposal with id 'nope'" in missing.output
    assert "Traceback" not in missing.output


def test_show_request_prints_the_exact_request_and_stores_nothing(config: Config, ledger: Ledger) -> None:
    from fakes.transcript import write_session

    memory_repo(config, {f"{FOLDER}/tabs.md": topic("Tabs", "Indent every file with tabs, never spaces.")})
    path = write_session(
        config.transcripts, [("person", SAID), ("assistant", "Understood.")], project=PROJECT
    )
    shown = cli_run(config, "consolidate", "run", str(path), "--show-request", "--json")
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["system"].startswith("You are the consolidation pass of dreamtui")
    assert f'<memory n="1" path="{FOLDER}/tabs.md">' in data["user"] and Q_SPACES in data["user"]
    assert set(data["schema"]["properties"]) == {"proposals"}
    assert rows.listed(ledger, None) == []


# -- statistics per kind -------------------------------------------------------------------------------


def test_stats_count_each_kind_and_only_a_persons_decisions(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    from dreamtui.core.dream.stats import compute_stats, format_stats

    body = "Keep the database connection pool at 10 connections in production."
    root = memory_repo(
        config,
        {
            f"{FOLDER}/settings.md": topic("Settings", "The settings live in src/settings.py."),
            f"{FOLDER}/lint.md": topic("Lint", "Always run npm run lint before committing."),
            f"{FOLDER}/pool.md": topic("Pool", body),
            "pool-size.md": topic("Pool size", body),
        },
    )
    items = {i.targets[0]: i for i in store(ledger, find.find_offline(root, PROJECT, project_repo(tmp_path)))}
    consolidate.accept(config, ledger, items[f"{FOLDER}/settings.md"].id)
    consolidate.reject(ledger, items[f"{FOLDER}/lint.md"].id, "still used on the old branch")
    kinds = compute_stats(ledger)["by_kind"]
    assert kinds["retire"] == {
        "accepted": 1, "rejected": 1, "decisions": 2, "accept_rate": 0.5,
        "pending": 0, "undone": 0, "auto_accepted": 0,
    }  # fmt: skip
    assert kinds["merge"]["pending"] == 1 and kinds["update"]["decisions"] == 0
    assert kinds["add"]["decisions"] == 0
    text = format_stats(compute_stats(ledger))
    assert (
        "  retire: 1/2 accepted (50%), 0 waiting" in text and "  merge: 0/0 accepted (—), 1 waiting" in text
    )


def test_the_app_stats_page_shows_kinds_only_once_something_was_proposed(ledger: Ledger) -> None:
    from rich.console import Console

    from dreamtui.core.dream.stats import compute_stats
    from dreamtui.tui.screens.stats import render_stats

    def page() -> str:
        console = Console(width=120, record=True, color_system=None)
        console.print(render_stats(compute_stats(ledger), []))
        return console.export_text()

    assert "Per kind" not in page()
    item = find._make(
        "retire", PROJECT, ["a.md"], "path x gone", "x", {"a.md": find.MemoryFile("a.md", "text")}
    )
    rows.add(ledger, item)
    assert "retire (1 waiting)" in page()


# -- crash safety ---------------------------------------------------------------------------------------

ACCEPT_SCRIPT = """
import sys
from pathlib import Path
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import consolidate
cfg = Config(transcripts=Path(sys.argv[1]), memory=Path(sys.argv[2]), state=Path(sys.argv[3]))
consolidate.accept(cfg, Ledger.open(cfg.state), sys.argv[4])
"""


@pytest.mark.parametrize("step", consolidate.CRASH_STEPS)
def test_an_accept_killed_at_any_step_leaves_the_whole_commit_or_nothing(
    config: Config, ledger: Ledger, step: str
) -> None:
    import os
    import sys

    from dreamtui.core.ledger import intents
    from dreamtui.core.memory import decisions, outside

    a, b = f"{FOLDER}/pool.md", "pool-size.md"
    body = "Keep the database connection pool at 10 connections in production."
    root = memory_repo(config, {a: topic("Pool", body), b: topic("Pool size", body)})
    [item] = store(ledger, find.find_offline(root, PROJECT))
    head = sh(root, "rev-parse", "HEAD").strip()
    child = subprocess.run(
        [sys.executable, "-c", ACCEPT_SCRIPT, str(config.transcripts), str(root), str(config.state), item.id],
        env={**os.environ, consolidate.CRASH_ENV: step},
        capture_output=True,
        timeout=60,
    )
    assert child.returncode == -9, child.stderr
    decisions.reconcile(config, ledger)  # what every start runs first
    outside.scan(config, ledger)
    assert outside.items(ledger) == []  # dreamtui's own interrupted write is never an outside change
    committed = step == "consolidate-commit"
    if not committed:
        assert sh(root, "rev-parse", "HEAD").strip() == head
        assert sh(root, "status", "--porcelain") == "" and (root / a).exists() and (root / b).exists()
    assert intents.count(ledger) == 0
    result = consolidate.accept(config, ledger, item.id)  # the retry: one commit, never two
    log = sh(root, "log", "--format=%H", f"{head}..HEAD").split()
    assert log == [result.commit_sha]
    assert rows.get(ledger, item.id).status == "accepted"  # type: ignore[union-attr]
    assert sh(root, "status", "--porcelain") == ""


def test_a_secret_in_a_proposed_text_never_reaches_the_ledger_or_the_memory(
    config: Config, ledger: Ledger
) -> None:
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    rel = f"{FOLDER}/deploy.md"
    root = memory_repo(config, {rel: topic("Deploy", "Deploy with the fabric script.")})
    files = {rel: find.MemoryFile(rel, (root / rel).read_text())}
    new = consolidate.rewrite(files[rel].text, f"Deploy through the workflow; token={token}")
    item = find._make("update", PROJECT, [rel], "the model said so", "x", files, keep=rel, new_text=new)
    rows.add(ledger, item)
    stored = rows.get(ledger, item.id)
    assert stored is not None and token not in (stored.new_text or "")
    consolidate.accept(config, ledger, item.id)
    assert token not in (root / rel).read_text() and "Deploy through the workflow" in (root / rel).read_text()
    assert token not in sh(root, "log", "-p", "-1")


def test_one_undo_takes_back_consolidations_in_the_order_decided(config: Config, ledger: Ledger) -> None:
    """``dreamtui undo`` / ``u`` (core ``undo.undo_last``) takes back a consolidation's accept (the
    newest decision), and the journal knows it is undone: a second undo finds nothing."""
    from dreamtui.core.memory import undo
    from dreamtui.core.memory.decisions import DecisionError

    a, b = f"{FOLDER}/pool.md", "pool-size.md"
    body = "Keep the database connection pool at 10 connections in production."
    root = memory_repo(config, {a: topic("Pool", body), b: topic("Pool size", body)})
    [merge] = store(ledger, find.find_offline(root, PROJECT))
    consolidate.accept(config, ledger, merge.id)
    assert not (root / b).exists() or not (root / a).exists()
    result = undo.undo_last(config, ledger)
    assert result.kind == "consolidation" and merge.id in result.action
    assert (root / a).exists() and (root / b).exists()
    assert rows.get(ledger, merge.id).status == "undone"  # type: ignore[union-attr]
    with pytest.raises(DecisionError, match="nothing to undo"):
        undo.undo_last(config, ledger)


def test_an_update_of_a_memory_the_model_saw_only_in_part_is_never_proposed(
    config: Config, ledger: Ledger
) -> None:
    """A memory longer than the request shows (``MAX_MEMORY_CHARS``) reaches the model cut: an update or
    merge written from that start would drop the rest of the file, so it is dropped as ``memory-cut``."""
    from fakes.anthropic_server import FakeAnthropic, Reply, message
    from fakes.transcript import write_session

    from dreamtui.core.dream.consolidation import run_pass
    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
    from dreamtui.core.extract.consolidate_prompt import MAX_MEMORY_CHARS
    from dreamtui.core.ingest.digest import digest_session

    tail = " ".join(f"Rule {n}: keep fixture {n} in tests/data." for n in range(200))
    assert len(tail) > MAX_MEMORY_CHARS
    root = memory_repo(config, {f"{FOLDER}/tabs.md": topic("Indent", "Indent with tabs. " + tail)})
    path = write_session(
        config.transcripts, [("person", SAID), ("assistant", "Understood.")], project=PROJECT
    )
    answer = {
        "proposals": [
            {"kind": "update", "memories": [1], "quote": Q_SPACES, "new_text": "Four spaces.", "reason": "r"}
        ]
    }
    with FakeAnthropic() as server:
        server.script.append(Reply(200, message(answer)))
        structured = AnthropicExtractor(
            model="claude-sonnet-5-5", api_key="sk-ant-test", base_url=server.url, max_retries=0
        ).structured()
        report = run_pass(root, ledger, PROJECT, [digest_session([path])], structured)
    assert report.proposed == {} and report.dropped == {"memory-cut": 1}
    assert rows.listed(ledger) == []
    assert "Rule 199" in (root / f"{FOLDER}/tabs.md").read_text()


def test_the_same_files_get_one_proposal_whoever_finds_them_and_however_it_is_worded(
    config: Config, ledger: Ledger
) -> None:
    """Two identical memories: the offline finder proposes the merge; the model proposing it again (in
    that pass, or the next day in other words) adds nothing, and neither does a model update of a file
    a pending proposal already changes."""
    from fakes.anthropic_server import FakeAnthropic, Reply, message
    from fakes.transcript import write_session

    from dreamtui.core.dream.consolidation import run_pass
    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
    from dreamtui.core.ingest.digest import digest_session

    body = "Keep the database connection pool at 10 connections in production."
    root = memory_repo(
        config, {f"{FOLDER}/pool.md": topic("Pool", body), "pool-size.md": topic("Pool size", body)}
    )
    path = write_session(
        config.transcripts, [("person", SAID), ("assistant", "Understood.")], project=PROJECT
    )
    digests = [digest_session([path])]

    def answer(reason: str) -> dict[str, object]:
        return {
            "proposals": [
                {"kind": "merge", "memories": [1, 2], "new_text": body, "reason": reason},
                {
                    "kind": "update",
                    "memories": [2],
                    "quote": Q_SPACES,
                    "new_text": "Pool at 12.",
                    "reason": "r",
                },
            ]
        }

    with FakeAnthropic() as server:
        structured = AnthropicExtractor(
            model="claude-sonnet-5-5", api_key="sk-ant-test", base_url=server.url, max_retries=0
        ).structured()
        server.script.append(Reply(200, message(answer("Both say the same."))))
        first = run_pass(root, ledger, PROJECT, digests, structured)
        server.script.append(Reply(200, message(answer("These two are duplicates of each other."))))
        second = run_pass(root, ledger, PROJECT, digests, structured)
    assert first.proposed == {"merge": 1} and first.dropped == {"same-files": 1} and first.known == 1
    assert second.proposed == {} and second.known == 2
    [item] = rows.listed(ledger)
    assert item.kind == "merge" and item.evidence_kind == "check"


def test_the_briefing_counts_what_kept_the_memory_true_and_what_waits(config: Config, ledger: Ledger) -> None:
    from dreamtui.core.memory import briefing

    a, b = f"{FOLDER}/pool.md", "pool-size.md"
    body = "Keep the database connection pool at 10 connections in production."
    root = memory_repo(config, {a: topic("Pool", body), b: topic("Pool size", body)})
    [item] = store(ledger, find.find_offline(root, PROJECT))
    text, _items = briefing.build_briefing(config, ledger, [], project=PROJECT)
    assert "Memories that may no longer hold: 0 update, 0 retire, 1 merge wait for review" in text
    assert "Memory kept true" not in text
    consolidate.accept(config, ledger, item.id)
    text, _items = briefing.build_briefing(config, ledger, [], project=PROJECT)
    assert "Memory kept true: 0 update, 0 retire, 1 merge accepted" in text
    assert "wait for review" not in text
