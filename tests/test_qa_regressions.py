"""Regression tests for bugs found by adversarial QA of the CLI (real files, real git, real SQLite)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import git
import pytest
from click.testing import CliRunner
from test_review import make

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops
from dreamtui.core.memory.briefing import write_briefing
from dreamtui.core.memory.review import write_review

SESSION = "11111111-2222-4333-8444-555555555555"


pytestmark = pytest.mark.usefixtures("git_home")


def _porcelain(repo_dir: Path) -> tuple[str, str, str]:
    """What a person sees: status, unstaged diff, staged diff."""
    g = git.Repo(repo_dir).git
    return g.status("--porcelain"), g.diff(), g.diff("--cached")


# -- regenerated files never overwrite a person's uncommitted changes ------------------------------


def test_review_refuses_to_overwrite_a_persons_staged_and_unstaged_edits(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    path = write_review(config, ledger, "2026-04-01")
    repo = git.Repo(config.memory)
    with path.open("a") as fh:
        fh.write("my staged note\n")
    repo.git.add(str(path))
    with path.open("a") as fh:
        fh.write("my unstaged note\n")
    before = _porcelain(config.memory)
    make(ledger, 2)  # the regenerated review would differ
    with pytest.raises(MemoryRepoError, match="uncommitted changes"):
        write_review(config, ledger, "2026-04-01")
    assert _porcelain(config.memory) == before
    assert path.read_text().endswith("my staged note\nmy unstaged note\n")


def test_review_left_uncommitted_by_dreamtui_itself_is_still_committed(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    path = write_review(config, ledger, "2026-04-01")
    make(ledger, 2)
    repo = git.Repo(config.memory)
    commits = len(gitops.list_commits(repo))
    write_review(config, ledger, "2026-04-01")
    text = path.read_text()
    # a crash between the write and the commit leaves exactly the bytes dreamtui would write again
    repo.git.reset("-q", "--hard", "HEAD~1")
    path.write_text(text)
    write_review(config, ledger, "2026-04-01")
    assert repo.git.status("--porcelain") == ""
    assert len(gitops.list_commits(repo)) == commits + 1


def test_briefing_refuses_to_overwrite_a_persons_edit(config: Config, ledger: Ledger) -> None:
    write_briefing(config, ledger, "# Briefing\n\n- one\n", "Briefing one", {"Dreamtui-Briefing": "1"})
    path = config.memory / "briefing.md"
    with path.open("a") as fh:
        fh.write("- my own note\n")
    before = _porcelain(config.memory)
    with pytest.raises(MemoryRepoError, match="briefing.md .*uncommitted changes"):
        write_briefing(config, ledger, "# Briefing\n\n- two\n", "Briefing two", {"Dreamtui-Briefing": "2"})
    assert _porcelain(config.memory) == before


# -- dreamtui link: a symlinked CLAUDE.md stays a symlink; unreadable files are one-line errors -------


def test_link_edits_a_symlinked_claude_md_where_it_points(tmp_path: Path) -> None:
    from dreamtui.core.memory.link import apply_link, plan_link

    dotfiles = tmp_path / "dotfiles" / "CLAUDE.md"
    dotfiles.parent.mkdir()
    dotfiles.write_text("# my rules\n")
    dotfiles.chmod(0o600)
    link = tmp_path / "claude" / "CLAUDE.md"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    apply_link(plan_link(tmp_path / "memory", link))
    assert link.is_symlink() and link.resolve() == dotfiles.resolve()
    text = dotfiles.read_text()
    assert text.startswith("# my rules\n") and "MEMORY.md" in text
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o600
    assert not plan_link(tmp_path / "memory", link).needed


def test_link_keeps_bytes_that_are_not_utf8_and_refuses_a_folder(tmp_path: Path) -> None:
    odd = tmp_path / "CLAUDE.md"
    odd.write_bytes(b"\xff\xfe latin-1 caf\xe9\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["link", "--memory", str(tmp_path / "m"), "--claude-md", str(odd), "--yes"])
    assert result.exit_code == 0, result.output
    assert odd.read_bytes().startswith(b"\xff\xfe latin-1 caf\xe9\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    result = runner.invoke(cli, ["link", "--memory", str(tmp_path / "m"), "--claude-md", str(folder), "--yes"])
    assert result.exit_code == 2
    assert "cannot read" in result.output and "Traceback" not in result.output


# -- a ledger that cannot be written is a one-line error, not a traceback ----------------------------


def _unprivileged() -> list[str]:
    """A command prefix that makes file permissions apply (root bypasses them), or skip."""
    if os.geteuid() != 0:
        return []
    if subprocess.run(["sh", "-c", "command -v setpriv"], capture_output=True).returncode != 0:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
            "--inh-caps=-dac_override,-dac_read_search"]


def test_read_only_ledger_is_a_one_line_error(config: Config, tmp_path: Path) -> None:
    Ledger.open(config.state).close()
    ledger_file = config.state / "ledger.sqlite3"
    for name in os.listdir(config.state):
        (config.state / name).chmod(0o444)
    config.state.chmod(0o555)
    try:
        env = {**os.environ, "DREAMTUI_STATE": str(config.state), "DREAMTUI_MEMORY": str(config.memory),
               "DREAMTUI_TRANSCRIPTS": str(config.transcripts)}
        for args in (["candidates"], ["stats"], ["dream"]):
            proc = subprocess.run([*_unprivileged(), sys.executable, "-c", "from dreamtui.cli.main import main; main()", *args],
                                  capture_output=True, text=True, env=env, timeout=60)
            assert proc.returncode == 2, proc.stderr
            assert "Traceback" not in proc.stderr
            assert proc.stderr.startswith(f"dreamtui: cannot write the ledger {ledger_file}")
            assert len(proc.stderr.strip().splitlines()) == 1
    finally:
        config.state.chmod(0o755)
        for name in os.listdir(config.state):
            (config.state / name).chmod(0o644)


# -- escape codes in transcript-derived text never reach the terminal ------------------------------


def _record(i: int, role: str, text: str, session: str = SESSION) -> dict[str, object]:
    rec: dict[str, object] = {
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/x", "sessionId": session,
        "version": "2.0.55", "type": role, "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "timestamp": f"2025-11-29T15:{i:02d}:00.000Z"}
    if role == "user":
        rec["message"] = {"role": "user", "content": text}
    else:
        rec["message"] = {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "m",
                          "content": [{"type": "text", "text": text}]}
    return rec


def _write_session(folder: Path, turns: list[tuple[str, str]], session: str = SESSION) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i, (role, text) in enumerate(turns):
            fh.write(json.dumps(_record(i, role, text, session)) + "\n")
    old = 1_700_000_000
    os.utime(path, (old, old))  # long finished: not deferred as still being written
    return path


LESSON_TURNS = [
    ("user", "Please add a dry run flag to the deploy script so I can test it safely before release."),
    ("assistant", "I'll add the flag now."),
    ("user", "No, never edit the generated files directly; always change the template instead because "
             "the generator overwrites them."),
    ("assistant", "Understood, I will edit the template."),
]


def test_project_names_with_escape_codes_are_shown_escaped(config: Config) -> None:
    project = "-home-\x1b]0;PWNED\x07\x1b[31mred"
    path = _write_session(config.transcripts / project, LESSON_TURNS)
    base = ["--transcripts", str(config.transcripts), "--memory", str(config.memory), "--state", str(config.state)]
    runner = CliRunner()
    outputs = []
    for args in (["dream"], ["dream"], ["dream", "--project", project],
                 ["verify", str(path), "never edit the generated files directly; always change the template"]):
        result = runner.invoke(cli, [*base, *args])
        outputs.append(result.output)
    text = "".join(outputs)
    assert "Nothing new in" in text and "reading" in text and "verified" in text
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]0;PWNED\\x07" in text


# -- config values that TOML accepts but dreamtui cannot use are one-line errors ---------------------


@pytest.mark.parametrize("text, message", [
    ("min_person_chars = 1e400", "'min_person_chars' must be a whole number"),
    ("concurrency = true", "'concurrency' must be a whole number"),
    ("concurrency = 2.5", "'concurrency' must be a whole number"),
    ("quiet_minutes = nan", "'quiet_minutes' must be a finite number"),
    ("quiet_minutes = -inf", "'quiet_minutes' must be a finite number"),
    ("command_timeout = 0", "'command_timeout' must be a finite number above 0"),
    ("rescan_seconds = -1", "'rescan_seconds' must be a finite number above 0"),
    ("model = 5", "'model' must be a string"),
])
def test_unusable_config_values_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text + "\n")
    result = CliRunner().invoke(cli, ["--config", str(cfg), "config"])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_usable_config_values_still_load(tmp_path: Path) -> None:
    from dreamtui.core.config import load_config

    cfg = tmp_path / "config.toml"
    cfg.write_text('concurrency = 3.0\nquiet_minutes = 0\nmin_person_chars = "40"\n')
    loaded = load_config(cfg)
    assert (loaded.concurrency, loaded.quiet_minutes, loaded.min_person_chars) == (3, 0.0, 40)


# -- a cycle retried after two failed attempts still counts (and finishes) the first one's work -----


def test_cycle_retried_twice_keeps_what_the_first_attempt_extracted(config: Config, ledger: Ledger,
                                                                    tmp_path: Path) -> None:
    from dataclasses import replace

    from dreamtui.core.dream.cycle import CycleFailed, run_cycle

    _write_session(config.transcripts / "-home-kim-acme", LESSON_TURNS)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the memory repository should be\n")
    broken = replace(config, memory=blocked)
    for _ in range(2):  # both attempts fail in REM; only the first had anything to extract
        with pytest.raises(CycleFailed, match="REM"):
            run_cycle(broken, ledger, date="2026-03-10")
    record = run_cycle(config, ledger, date="2026-03-10")
    assert record.status == "completed" and record.depth == "deep"
    assert record.stats.attempt == 3
    assert record.stats.kept >= 1 and record.stats.surfaced >= record.stats.kept
    assert record.stats.review_path and Path(record.stats.review_path).is_file()
    kept = ledger.query("SELECT COUNT(*) AS n FROM candidates WHERE status = 'pending'")[0]["n"]
    assert record.stats.kept == kept


# -- --project must name one project folder, not a path ---------------------------------------------


@pytest.mark.parametrize("project", ["..", ".", "", "acme/", "ABS"])
def test_dream_project_that_is_a_path_is_refused_and_records_nothing(config: Config, ledger: Ledger,
                                                                     project: str) -> None:
    from dreamtui.core.dream.cycle import run_cycle
    from dreamtui.core.errors import ConfigError

    _write_session(config.transcripts / "acme", LESSON_TURNS)
    if project == "ABS":
        project = str(config.transcripts / "acme")
    with pytest.raises(ConfigError, match="no project"):
        run_cycle(config, ledger, project=project, date="2026-03-10")
    assert ledger.query("SELECT COUNT(*) AS n FROM dream_cycles")[0]["n"] == 0


# -- git and file-system failures in the memory repository are one-line errors ----------------------


def test_git_read_failures_are_memory_repo_errors(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    write_review(config, ledger, "2026-04-01")
    repo = git.Repo(config.memory)
    with pytest.raises(MemoryRepoError, match="git diff-tree failed"):
        gitops.changed_paths(repo, "0123456789" * 4)
    assert gitops.status(repo, ["reviews/review-2026-04-01.md"]) == {}


def test_status_never_writes_the_index(config: Config, ledger: Ledger) -> None:
    """A listing must not need to write (a full disk, a person's lock): ``git status`` would."""
    make(ledger, 1)
    path = write_review(config, ledger, "2026-04-01")
    index = config.memory / ".git" / "index"
    os.utime(path, None)  # the stat data no longer matches: plain ``git status`` would refresh the index
    before = index.stat().st_mtime_ns
    assert gitops.status(git.Repo(config.memory), ["reviews/review-2026-04-01.md"]) == {}
    assert index.stat().st_mtime_ns == before


def test_unwritable_memory_folder_is_a_one_line_error(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    write_review(config, ledger, "2026-04-01")
    make(ledger, 2)
    reviews = config.memory / "reviews"
    reviews.chmod(0o555)
    try:
        env = {**os.environ, "DREAMTUI_STATE": str(config.state), "DREAMTUI_MEMORY": str(config.memory),
               "DREAMTUI_TRANSCRIPTS": str(config.transcripts)}
        proc = subprocess.run([*_unprivileged(), sys.executable, "-c", "from dreamtui.cli.main import main; main()",
                               "review", "--date", "2026-04-01"], capture_output=True, text=True, env=env, timeout=60)
    finally:
        reviews.chmod(0o755)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("dreamtui: cannot write ") and "review-2026-04-01.md" in proc.stderr
    assert git.Repo(config.memory).git.status("--porcelain") == ""


def test_ceiling_warning_never_says_full_while_there_is_room() -> None:
    from dreamtui.core.memory.layout import ceiling_of, ceiling_warning

    text = "".join(f"- [m{i}](m{i}.md) — hook\n" for i in range(199))
    warning = ceiling_warning(ceiling_of(text))
    assert warning is not None and "at 99% " in warning and "(199/200 lines" in warning
    assert "at 100% " in (ceiling_warning(ceiling_of(text + "- [x](x.md) — y\n")) or "")


def test_json_output_escapes_c1_controls_and_bidi_overrides_and_stays_the_same_data(config: Config) -> None:
    nasty = "\x9b31m\u202e\x7f"
    turns = [("user", f"Please never edit the generated files directly {nasty}; always change the template "
                      "instead because the generator overwrites them.")]
    path = _write_session(config.transcripts / "acme", turns)
    result = CliRunner().invoke(cli, ["digest", "--json", str(path)])
    assert result.exit_code == 0, result.output
    assert not any(ch in result.output for ch in "\x9b\u202e\x7f")
    assert nasty in json.loads(result.output)["turns"][0]["text"]


# -- undo says so when it committed with the fallback identity, as accept does ----------------------


def test_undo_reports_the_fallback_git_identity(config: Config, ledger: Ledger, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamtui.core.memory import decisions

    empty = tmp_path / "empty-home"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(empty))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(empty / ".config"))
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    make(ledger, 1)
    accepted = decisions.accept(config, ledger, "r001")
    assert any("no user.name" in n for n in accepted.notices)
    undone = decisions.undo_last(config, ledger)
    assert undone.commit_sha
    assert any("no user.name" in n for n in undone.notices)
    assert git.Repo(config.memory).head.commit.author.email == gitops.FALLBACK_EMAIL


def test_watch_on_a_missing_folder_says_only_why(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--transcripts", str(tmp_path / "nope"), "--memory", str(tmp_path / "m"),
                                      "--state", str(tmp_path / "s"), "watch", "--poll"])
    assert result.exit_code == 2
    assert "cannot watch" in result.output and "stopped watching" not in result.output


def test_dream_with_a_command_extractor_that_cannot_start_records_nothing(config: Config, ledger: Ledger,
                                                                          tmp_path: Path) -> None:
    _write_session(config.transcripts / "acme", LESSON_TURNS)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'extractor = "command"\ncommand = "{tmp_path / "no-such-tool"} --json"\n')
    result = CliRunner().invoke(cli, ["--config", str(cfg), "--transcripts", str(config.transcripts),
                                      "--memory", str(config.memory), "--state", str(config.state), "dream"])
    assert result.exit_code == 2, result.output
    assert "extractor command not found" in result.output
    assert ledger.query("SELECT COUNT(*) AS n FROM dream_cycles")[0]["n"] == 0


def test_the_app_without_a_terminal_is_a_one_line_error(tmp_path: Path) -> None:
    env = {**os.environ, "DREAMTUI_TRANSCRIPTS": str(tmp_path / "t"), "DREAMTUI_MEMORY": str(tmp_path / "m"),
           "DREAMTUI_STATE": str(tmp_path / "s")}
    proc = subprocess.run([sys.executable, "-c", "from dreamtui.cli.main import main; main()"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("dreamtui: the review app needs a terminal")
    assert "\x1b" not in proc.stdout + proc.stderr and not (tmp_path / "s").exists()


# -- bytes that are not UTF-8 on the command line (a shell passes them as lone surrogates) ------------


@pytest.mark.parametrize("args", [["accept", "c\udcff"], ["reject", "\udcff", "--reason", "x"], ["skip", "\udcff"],
                                  ["promote", "--keep", "\udcff"], ["promote", "--reject", "\udcff", "--reason", "x"],
                                  ["skip", "\x1b]0;x\x07"]])
def test_candidate_ids_that_are_not_text_are_usage_errors(config: Config, args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["--transcripts", str(config.transcripts), "--memory", str(config.memory),
                                      "--state", str(config.state), *args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "is not a candidate id" in result.output and "\x1b" not in result.output


def test_verify_a_quote_with_a_lone_surrogate(config: Config) -> None:
    from dreamtui.core.gate.verify import verify_quote

    text = "Always run the migrations before the test suite \udcff because the schema drifts otherwise."
    path = _write_session(config.transcripts / "acme", [("user", text)])
    assert verify_quote("the test suite \udcff because the schema drifts", [path]).verified
    assert not verify_quote("\udcff\udcfe one two three four five six", [path]).verified
    result = CliRunner().invoke(cli, ["verify", str(path), "\udcff\udcfe one two three four five six"])
    assert result.exit_code == 1, result.output
    assert "not verified" in result.output


def test_dream_over_a_transcripts_path_that_is_a_file_says_so(config: Config, ledger: Ledger, tmp_path: Path) -> None:
    from dataclasses import replace

    from dreamtui.core.dream.cycle import run_cycle
    from dreamtui.core.errors import TranscriptError

    a_file = tmp_path / "projects.txt"
    a_file.write_text("not a folder\n")
    with pytest.raises(TranscriptError, match="is not a folder"):
        run_cycle(replace(config, transcripts=a_file), ledger, date="2026-03-10")
    with pytest.raises(TranscriptError, match="does not exist"):
        run_cycle(replace(config, transcripts=tmp_path / "missing"), ledger, date="2026-03-10")


def test_config_shows_paths_with_escape_codes_escaped(tmp_path: Path) -> None:
    odd = tmp_path / "mem\x1b]0;T\x07ory"
    result = CliRunner().invoke(cli, ["--memory", str(odd), "--state", str(tmp_path / "s"), "config"])
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "mem\\x1b]0;T\\x07ory" in result.output


# -- a line holding a lone surrogate escape ("\udcff", as JavaScript writes half an emoji) -----------


def test_a_prompt_with_a_lone_surrogate_escape_is_digested_verified_and_kept(config: Config, ledger: Ledger) -> None:
    from dreamtui.core.dream.cycle import run_cycle
    from dreamtui.core.ingest.digest import digest_file

    text = ("No, never edit the generated files directly \udcff; always change the template instead because "
            "the generator overwrites them.")
    path = _write_session(config.transcripts / "acme", [*LESSON_TURNS[:2], ("user", text)])
    digest = digest_file(path)
    assert digest.stats.malformed == 0
    assert [t.text for t in digest.turns if t.role == "person"][-1] == text.replace("\udcff", "\ufffd")
    result = CliRunner().invoke(cli, ["digest", "--json", str(path)])
    assert result.exit_code == 0, result.output
    assert "\ufffd" in json.loads(result.output)["turns"][-1]["text"]
    record = run_cycle(config, ledger, date="2026-03-10")
    assert record.stats.kept >= 1 and not record.stats.dropped.get("unverified")
    quotes = [r["quote"] for r in ledger.query("SELECT quote FROM candidates WHERE status = 'pending'")]
    assert any("\ufffd" in q for q in quotes)
