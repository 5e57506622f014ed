"""The briefing: offline synthesis from digests, the model path (fake Messages API), git history."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import briefing
from dreamtui.core.memory.briefing import MAX_LINES, offline_briefing, parse_sections, rewrite_briefing
from dreamtui.core.models import Digest, Turn
from tests.fakes.anthropic_server import FakeAnthropic, Reply, error, message


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "Kim")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "kim@example.com")


def digest(session: str, *turns: tuple[str, str]) -> Digest:
    return Digest(session=session, project="-home-kim-acme", files=["f.jsonl"],
                  turns=[Turn(role=role, text=text, file="f.jsonl", line=i + 1)  # type: ignore[arg-type]
                         for i, (role, text) in enumerate(turns)])


BUSY = digest(
    "22222222-aaaa",
    ("person", "Let's work on the invoice exporter today, the CSV dates are mangled by Excel."),
    ("assistant", "Decided: we will write ISO 8601 dates with a UTF-8 BOM. The tests pass."),
    ("assistant", "Blocked: the staging database is down, so the migration cannot be tested."),
    ("assistant", "Next: add a backup step to the deploy script."),
)


def test_offline_briefing_has_the_four_sections_from_the_digests() -> None:
    text = offline_briefing([BUSY], ["Always use uv instead of pip."], None, "2026-03-10", "-home-kim-acme")
    sections = parse_sections(text)
    assert list(sections) == ["Working on", "Decided", "Blocked", "Next"]
    assert any("invoice exporter" in item for item in sections["Working on"])
    assert any("ISO 8601" in item for item in sections["Decided"])
    assert "Always use uv instead of pip." in sections["Decided"]
    assert any("staging database is down" in item for item in sections["Blocked"])
    assert any("backup step" in item for item in sections["Next"])


def test_offline_briefing_keeps_earlier_items_while_there_is_room() -> None:
    first = offline_briefing([BUSY], [], None, "2026-03-10", "acme")
    later = digest("33333333-bbbb", ("person", "Now the importer: it must skip rows whose amount is empty."))
    second = offline_briefing([later], [], first, "2026-03-11", "acme")
    working = parse_sections(second)["Working on"]
    assert working[0].startswith("Now the importer")  # the new work first
    assert any("invoice exporter" in item for item in working)  # yesterday's still there
    assert parse_sections(second)["Blocked"] == parse_sections(first)["Blocked"]


def test_offline_briefing_stays_within_80_clean_lines_whatever_the_input() -> None:
    noisy = "\x1b[31mred\x1b[0m [bold]markup[/bold] \x1b]8;;http://x\x07link\x1b]8;;\x07 " + "word " * 400
    turns = [("person", f"Please keep going with part {i}: {noisy}") for i in range(50)]
    turns += [("assistant", f"Decided: we will ship part {i}. Blocked: part {i} fails. Next: part {i + 1}.")
              for i in range(200)]
    d = digest("44444444-cccc", *turns)
    text = offline_briefing([d] * 5, [f"memory {i} " + "x" * 500 for i in range(100)], None, "2026-03-10", "acme")
    assert len(text.splitlines()) <= MAX_LINES
    assert "\x1b" not in text and "\x07" not in text
    assert max(len(line) for line in text.splitlines()) <= 200


def test_rewrite_commits_only_the_briefing_and_keeps_its_history(config: Config, ledger: Ledger) -> None:
    repo = git.Repo.init(config.memory, initial_branch="main")
    (config.memory / "notes.md").write_text("my own work in progress\n")
    repo.index.add(["notes.md"])  # the person's staged work must not be swept in
    first = rewrite_briefing(config, ledger, [BUSY], day="2026-03-10", project="-home-kim-acme")
    assert first.commit and first.source == "offline"
    assert (config.memory / "briefing.md").read_text() == first.text
    assert repo.head.commit.hexsha == first.commit
    assert list(repo.head.commit.stats.files) == ["briefing.md"]
    assert "notes.md" in {e[0] for e in repo.index.entries}  # still staged, not committed
    assert "notes.md" not in repo.head.commit.tree

    same = rewrite_briefing(config, ledger, [], day="2026-03-10", project="-home-kim-acme")
    assert same.commit is None  # nothing new: no empty commit
    later = digest("33333333-bbbb", ("person", "Now the importer: it must skip rows whose amount is empty."))
    second = rewrite_briefing(config, ledger, [later], day="2026-03-11", project="-home-kim-acme")
    assert second.commit and second.commit != first.commit

    history = briefing.briefing_history(config)
    assert [v.sha for v in history] == [second.commit, first.commit]
    assert briefing.briefing_at(config, first.commit) == first.text
    assert briefing.read_briefing(config) == second.text


def test_the_model_writes_the_briefing_when_configured(config: Config, ledger: Ledger,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    reply = "## Working on\n- The invoice exporter\n\n## Decided\n- ISO dates\n\n## Blocked\n- Staging is down\n\n## Next\n- Backups\n"
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.script.append(Reply(200, message(reply, input_tokens=900, output_tokens=80, cache_read=0)))
        result = rewrite_briefing(config, ledger, [BUSY], day="2026-03-10", use_model=True, project="acme")
        sent = server.calls()[0].body
    assert result.source == "model"
    assert (result.usage.calls, result.usage.input_tokens, result.usage.output_tokens) == (1, 900, 80)
    assert parse_sections(result.text)["Blocked"] == ["Staging is down"]
    assert result.text.startswith("# Briefing\n\n_Rewritten by the dream cycle of 2026-03-10 for acme (")
    assert "invoice exporter" in sent["messages"][0]["content"]
    assert sent["model"] == config.model


def test_a_failing_model_falls_back_to_the_offline_synthesis(config: Config, ledger: Ledger,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        config = Config(**{**config.__dict__, "max_retries": 0})
        server.script.append(error(529, "overloaded_error", "Overloaded", retry_after_ms=None))
        result = rewrite_briefing(config, ledger, [BUSY], day="2026-03-10", use_model=True, project="acme")
    assert result.source.startswith("offline (model failed")
    assert result.commit
    assert "invoice exporter" in result.text


def test_history_without_a_repository_is_empty(tmp_path: Path, config: Config) -> None:
    assert briefing.briefing_history(config) == []
    assert briefing.read_briefing(config) is None


def test_sentences_do_not_end_at_abbreviations_or_file_names() -> None:
    text = "Commit the staged changes (i.e. the reviewed ones) before the release. Then edit setup.py, e.g. the version."
    assert briefing.sentences(text) == ["Commit the staged changes (i.e. the reviewed ones) before the release.",
                                        "Then edit setup.py, e.g. the version."]
