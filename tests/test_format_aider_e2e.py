"""Aider's histories through the rest of dreamtui: the registry, the digest, quote verification, the
evidence view, secrets, a bad file beside good ones, and ``watch`` picking up an append (real files:
``tests/fixtures/agents/aider/PROVENANCE.md``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from dreamtui.core.files import Skipped
from dreamtui.core.gate.verify import verify_quotes
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.digest import digest_file
from dreamtui.core.ingest.formats import aider
from dreamtui.core.secrets import has_secret, redact

FIX = Path(__file__).parent / "fixtures" / "agents" / "aider"
REAL = sorted(FIX.glob("*.chat.history.md"))
WORD = re.compile(r"\S+")


def _placed(tmp_path: Path, fixture: Path) -> Path:
    """A real history where Aider writes it: ``<project>/.aider.chat.history.md``."""
    folder = tmp_path / fixture.name.split(".")[0]
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(fixture, folder / aider.HISTORY_NAME))


def _quotes(path: Path) -> list[tuple[str, str]]:
    """(quote, whose words) for every person and assistant piece of six words or more: its first
    eight words, as a model quoting it would copy them."""
    out = []
    for rec in aider.records(path):
        for piece in aider.pieces(rec.obj):
            if piece.role not in ("person", "assistant"):
                continue
            words = WORD.findall(piece.text)
            if len(words) >= 6:
                out.append((" ".join(words[:8]), piece.role))
    return out


def _altered(quote: str) -> str:
    """The quote with one word changed (the middle one)."""
    words = quote.split(" ")
    words[len(words) // 2] = "zqxjv" + words[len(words) // 2]
    return " ".join(words)


def test_the_format_is_registered_and_claims_its_files():
    assert formats.FORMATS["aider"] is aider
    assert formats.format_for(Path("/home/kim/src/app") / aider.HISTORY_NAME) is aider
    assert formats.format_for(Path("/home/kim/.claude/projects/x/s.jsonl")) is not aider


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split(".")[0])
def test_quote_verification_real_all_altered_none(tmp_path: Path, path: Path):
    path = _placed(tmp_path, path)
    quotes = _quotes(path)
    assert quotes, "every real history here has turns of six words or more"
    real = verify_quotes([q for q, _ in quotes], [path])
    assert all(v.verified for v in real), [
        q for (q, _), v in zip(quotes, real, strict=True) if not v.verified
    ]
    for (quote, role), v in zip(quotes, real, strict=True):
        assert v.best is not None and v.best.provenance == role, quote
        assert v.best.line >= 1 and v.best.file == str(path)
    altered = verify_quotes([_altered(q) for q, _ in quotes], [path])
    assert not any(v.verified for v in altered)


def test_notice_and_fenced_text_verify_but_never_as_the_person(tmp_path: Path):
    path = _placed(tmp_path, FIX / "aider-ai-aider.chat.history.md")
    notice = "Models: claude-3-5-sonnet-20240620 with diff edit format, weak model claude-3-haiku-20240307"
    edit = 'print(f" Installing... {next(spinner)}", end="\\r", flush=True)'
    lint = "aider/repomap.py:23:1: E402 module level import not at top of file"
    found = verify_quotes([notice, edit, lint], [path])
    assert all(v.verified for v in found)
    assert [v.best.provenance for v in found if v.best] == ["meta", "tool", "meta"]
    # the lint output: in Aider's notices (meta) and fed back as a #### turn (the tool's), never the person's
    assert {m.provenance for m in found[2].matches} == {"meta", "tool"}
    assert not any(m.provenance == "person" for v in found for m in v.matches)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split(".")[0])
def test_digest_keeps_the_persons_words_and_the_prose_never_notices_or_edits(tmp_path: Path, path: Path):
    path = _placed(tmp_path, path)
    digest = digest_file(path)
    person = [t.text for t in digest.turns if t.role == "person"]
    expected = [
        p.text
        for rec in aider.records(path)
        for p in aider.pieces(rec.obj)
        if p.role == "person" and rec.obj["type"] == "person"
    ]
    assert person and set(person) == set(expected)
    text = "\n".join(t.text for t in digest.turns)
    assert "<<<<<<< SEARCH" not in text and ">>>>>>> REPLACE" not in text
    assert "Tokens:" not in text and "aider chat started at" not in text
    lines = path.read_text(encoding="utf-8").split("\n")
    for turn in digest.turns:
        assert turn.file == str(path) and turn.line >= 1
        if turn.role == "person":
            assert lines[turn.line - 1].startswith("#### ")


def test_evidence_renders_a_verified_quote_block(tmp_path: Path):
    path = _placed(tmp_path, FIX / "asphyksia-opencoder.chat.history.md")
    quote = "puedes crearme un script para apagar mi pc en zorinos?"
    (v,) = verify_quotes([quote], [path])
    assert v.verified and v.best is not None and v.best.provenance == "person"
    rec = next(r for r in aider.records(path) if r.locator == v.best.line)
    shown = aider.render(rec.locator, rec.obj)
    assert shown.texts == [("person", quote)] and shown.timestamp == "2026-02-28T22:03:50"


def test_a_secret_in_a_turn_is_redacted_before_it_leaves(tmp_path: Path):
    """Written here: a person pastes a key into a turn; the digest holds it (the raw words), and what
    is sent or stored (``redact``) never does."""
    key = (
        "sk-ant-api03-"
        + "Zx8Qw2Lm4Np6Rt8Vb0Cd2Fg4Hj6Kl8Mn0Pq2St4Uv6Wx8Yz0Ab2Cd4Ef6Gh8Ij0Kl2Mn4Op6Qr8St0UvWxAA"
    )
    path = tmp_path / aider.HISTORY_NAME
    path.write_text(
        "\n# aider chat started at 2025-03-01 10:00:00\n\n"
        f"#### use this key for the tests: {key}  \n\nI will not store it.\n\n"
    )
    (turn,) = [t for t in digest_file(path).turns if t.role == "person"]
    assert has_secret(turn.text) and key not in redact(turn.text)


def test_a_bad_history_beside_good_ones_is_one_notice(tmp_path: Path):
    good = tmp_path / "good"
    good.mkdir()
    shutil.copy(FIX / "beehive-zen-mcp-server.chat.history.md", good / aider.HISTORY_NAME)
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / aider.HISTORY_NAME).symlink_to("/dev/zero")
    skipped: list[Skipped] = []
    found = aider.discover(tmp_path, skipped)
    assert [tf.path for tf in found] == [good / aider.HISTORY_NAME]
    assert len(skipped) == 1 and "\n" not in skipped[0].notice
