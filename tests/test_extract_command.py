"""The command extractor: a real program reads the digest on stdin and prints candidates on stdout."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from fakes.waiting import wait_for

from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.command import CommandExtractor
from dreamtui.core.models import Digest, Turn

DIGEST = Digest(
    session="s9",
    project="-srv-api",
    files=["/t/s9.jsonl"],
    turns=[
        Turn(
            "person",
            "Never deploy on Fridays, the on-call rota is thin. token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "/t/s9.jsonl",
            4,
            "u4",
            None,
            "prompt",
        ),
    ],
)
CTX = ExtractContext(project="-srv-api", memories=("Use blue-green deploys.",))


def program(tmp_path: Path, body: str) -> list[str]:
    """A Python program written to tmp_path, as an argv."""
    script = tmp_path / "extractor.py"
    script.write_text("import json, sys, time\n" + body, encoding="utf-8")
    return [sys.executable, str(script)]


ECHO_QUOTE = """
req = json.load(sys.stdin)
json.dump({"seen": req}, open(sys.argv[1], "w"))
turn = req["digest"]["turns"][0]["text"]
print(json.dumps({"candidates": [{"claim": "Do not deploy on Fridays.", "why": "Thin on-call.",
    "how_to_apply": "Plan releases Mon-Thu.", "type": "feedback", "scope": "global",
    "quote": turn.split(",")[0]}]}))
"""


def test_reads_candidates_and_gets_the_redacted_digest_on_stdin(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    ex = CommandExtractor([*program(tmp_path, ECHO_QUOTE), str(seen)], timeout=20)
    result = ex.extract(DIGEST, CTX)
    [cand] = result.candidates
    assert (cand.quote, cand.type, cand.scope, cand.extractor) == (
        "Never deploy on Fridays",
        "feedback",
        "global",
        "command",
    )
    req = json.loads(seen.read_text())["seen"]
    assert req["session"] == "s9" and req["project"] == "-srv-api"
    assert req["memories"] == ["Use blue-green deploys."]
    assert req["digest"]["turns"][0]["line"] == 4
    assert "ghp_" not in json.dumps(req) and "[REDACTED:github-token]" in req["digest"]["turns"][0]["text"]


def test_a_bare_list_is_accepted_and_bad_items_are_dropped_and_counted(tmp_path: Path) -> None:
    body = """print(json.dumps([{"claim": "c", "quote": "Never deploy on Fridays", "type": "feedback", "scope": "x"},
                    {"claim": "no quote", "type": "feedback"}, "junk"]))"""
    result = CommandExtractor(program(tmp_path, body), timeout=20).extract(DIGEST, CTX)
    assert len(result.candidates) == 1 and result.candidates[0].scope == "-srv-api"
    assert result.malformed == 2
    assert "2 malformed" in result.notes[0]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("print('lessons: none today')", "did not print JSON"),
        ("print(json.dumps({'lessons': []}))", 'no "candidates" list'),
        ("print(json.dumps(42))", "must be"),
        (
            "print(json.dumps({'candidates': [{'claim': 'x'}]}))",
            "every candidate from the extractor command was malformed",
        ),
        (
            "sys.stderr.write('model file missing\\n'); sys.exit(3)",
            "exited with status 3: model file missing",
        ),
    ],
)
def test_bad_output_is_a_clear_one_line_error(tmp_path: Path, body: str, words: str) -> None:
    with pytest.raises(ExtractorError) as info:
        CommandExtractor(program(tmp_path, body), timeout=20).extract(DIGEST, CTX)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_timeout_kills_the_program(tmp_path: Path) -> None:
    argv = program(tmp_path, "import threading\nthreading.Event().wait()\n")  # never answers
    started = time.monotonic()
    with pytest.raises(ExtractorError, match="timed out after 0.3s"):
        CommandExtractor(argv, timeout=0.3).extract(DIGEST, CTX)
    assert time.monotonic() - started < 60  # it did not wait for the program's two minutes
    assert wait_for(lambda: not _running(argv[-1])), "the timed-out program was left running"


def _running(script: str) -> bool:
    """Whether a live (not zombie) process runs ``script``."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if script.encode() in cmdline and state != "Z":
            return True
    return False


def test_missing_program_and_missing_command(tmp_path: Path, config) -> None:
    with pytest.raises(ExtractorError, match="not found"):
        CommandExtractor([str(tmp_path / "nope")]).extract(DIGEST, CTX)

    with pytest.raises(ExtractorError, match="needs a command"):
        make_extractor(config.changed(extractor="command", command=()))


def test_undecodable_text_and_escape_codes_reach_the_program_as_valid_utf8(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    odd = Digest(
        session="s",
        project="p",
        turns=[Turn("person", "never \udcff ship \x1b[31mred\x1b[0m on Fridays ok", "f", 1)],
    )
    ex = CommandExtractor([*program(tmp_path, ECHO_QUOTE), str(seen)], timeout=20)
    result = ex.extract(odd, CTX)
    text = json.loads(seen.read_text(encoding="utf-8"))["seen"]["digest"]["turns"][0]["text"]
    assert "\ufffd" in text and "\x1b[31m" in text
    assert result.candidates


def test_command_extractor_from_the_config_file_end_to_end(tmp_path: Path, config) -> None:
    from click.testing import CliRunner
    from fakes.transcript import write_session

    from dreamtui.cli.main import cli

    path = write_session(
        config.transcripts,
        [("person", "Never deploy on Fridays, the on-call rota is thin."), ("assistant", "Understood.")],
    )
    body = """
req = json.load(sys.stdin)
first = req["digest"]["turns"][0]["text"]
print(json.dumps({"candidates": [
    {"claim": "No Friday deploys.", "why": "w", "how_to_apply": "h", "type": "feedback", "scope": "project",
     "quote": first.split(",")[0] + ", the on-call rota is thin"},
    {"claim": "Made up.", "why": "w", "how_to_apply": "h", "type": "feedback", "scope": "project",
     "quote": "Deploy whenever you like, nobody is on call anyway."}]}))
"""
    argv = program(tmp_path, body)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'extractor = "command"\ncommand = {json.dumps(argv)}\ncommand_timeout = 20\n', encoding="utf-8"
    )
    res = CliRunner().invoke(
        cli,
        [
            "--config",
            str(cfg),
            "--state",
            str(config.state),
            "--memory",
            str(config.memory),
            "extract",
            str(path),
            "--json",
        ],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["extractor"] == "command"
    assert [c["claim"] for c in data["candidates"]] == ["No Friday deploys."]
    assert data["candidates"][0]["provenance"] == "person"
    assert data["dropped"] == {"unverified": 1}


def test_auto_picks_anthropic_when_a_key_is_set(config, monkeypatch: pytest.MonkeyPatch) -> None:

    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    ex = make_extractor(config.changed(extractor="auto", model="claude-x-1", max_retries=1))
    assert isinstance(ex, AnthropicExtractor) and ex.model == "claude-x-1" and ex.max_retries == 1
