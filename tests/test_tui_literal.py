"""Hostile transcript text is shown literally: escapes visible, nothing obeyed, nothing crashes."""

from __future__ import annotations

import json
from pathlib import Path

from fakes.tui import make_config, plain, queue_of, screen_text, wait_for, wait_loaded

from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Candidate, Match
from dreamtui.services.evidence import raw_record, read_window
from dreamtui.tui.app import DreamApp
from dreamtui.tui.widgets.literal import literal, literal_text

OSC_LINK = "\x1b]8;;https://evil.example\x07click me\x1b]8;;\x07"
TITLE = "\x1b]0;pwned\x07"
BIDI = "abc\u202edcba"


def test_escape_and_control_characters_become_visible() -> None:
    shown = literal(f"{OSC_LINK} {TITLE} \x1b[2J bell\x07 nul\x00 {BIDI}")
    assert "\x1b" not in shown and "\x07" not in shown and "\x00" not in shown and "\u202e" not in shown
    assert "␛]8;;https://evil.example␇click me" in shown
    assert "␛[2J" in shown and "␀" in shown and "\\u202e" in shown


def test_the_app_never_shows_a_secret_even_across_a_cut() -> None:
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    assert literal(f"use {key} here") == "use [REDACTED:stripe-key] here"
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" * 3
        + "-----END RSA PRIVATE KEY-----"
    )
    shown = literal("x" * 40 + pem, limit=70)  # the cut falls inside the key block
    assert "MIIEow" not in shown and shown.startswith("x" * 40 + "[REDACTED:private-key]")


def test_markup_stays_characters() -> None:
    text = literal_text("[bold red]x[/] [link=https://evil.example]y[/link] [@click=app.quit]z[/]")
    assert text.plain == "[bold red]x[/] [link=https://evil.example]y[/link] [@click=app.quit]z[/]"
    assert not text.spans


def test_surrogates_and_huge_text_are_bounded() -> None:
    assert literal("bad \udcff byte") == "bad \ufffd byte"
    shown = literal("x" * 100_000, limit=100)
    assert shown.startswith("x" * 100) and "+99,900 chars" in shown


def test_broken_lines_decode_to_placeholders() -> None:
    assert raw_record(1, b"\xff\xfe not json").broken
    assert raw_record(2, b"[1, 2]").broken
    big = raw_record(3, b'{"type":"user","message":{"content":"' + b"a" * 300_000 + b'"}}')
    assert big.oversized and "too long to show" in big.texts[0][1]
    invalid_utf8 = b'{"type":"user","message":{"role":"user","content":"caf\xe9 ok"}}'
    assert raw_record(4, invalid_utf8).texts  # decoded with surrogateescape, not dropped


def _hostile_transcript(folder: Path) -> tuple[Path, str]:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "timestamp": "2026-11-28T10:00:00.000Z",
            "message": {"role": "user", "content": f"look {OSC_LINK} {TITLE} \x1b[2J"},
        },
        {
            "type": "assistant",
            "uuid": "u2",
            "timestamp": "2026-11-28T10:00:05.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "[@click=app.quit]quit[/]"}],
            },
        },
        {
            "type": "user",
            "uuid": "u3",
            "timestamp": "2026-11-28T10:00:09.000Z",
            "message": {
                "role": "user",
                "content": "never trust the [blink]blinking[/] output, we tried that",
            },
        },
    ]
    path = folder / "-tmp-hostile" / "hostile.jsonl"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fh:
        for rec in lines:
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        fh.write(b"\xff\xfe this line is not JSON\n")
        fh.write(b'{"type":"user","message":{"role":"user","content":"' + b"z" * 300_000 + b'"}}\n')
    return path, "never trust the [blink]blinking[/] output, we tried that"


async def test_the_app_shows_a_hostile_transcript_literally(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    path, quote = _hostile_transcript(cfg.transcripts)
    ledger = Ledger.open(cfg.state)
    assert [r.line for r in read_window(path, 3)] == [1, 2, 3, 4, 5]
    ledger.put_candidate(
        Candidate(
            id="chostile0001",
            session="hostile",
            project="-tmp-hostile",
            transcript=str(path),
            claim=f"Never trust {OSC_LINK} [@click=app.quit]output[/]",
            why=TITLE,
            how_to_apply=BIDI,
            type="feedback",
            scope="global",
            quote=quote,
            extractor="heuristic",
            model=None,
            provenance="person",
            matches=[Match(str(path), 3, "u3", "2026-11-28T10:00:09.000Z", "person")],
            created_at="2026-11-28T10:00:10Z",
            updated_at="2026-11-28T10:00:10Z",
        )
    )
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for(pilot, lambda: queue_of(app) is not None and queue_of(app).table.row_count == 1)
        await wait_loaded(pilot)  # the evidence is shown, scrolled to the quote
        summary, evidence = plain(app, "#summary"), plain(app, "#evidence")
        assert "[@click=app.quit]output[/]" in summary and "␛]8;;https://evil.example␇" in summary
        assert "[@click=app.quit]quit[/]" in evidence and "␛]0;pwned␇" in evidence
        assert "too long to show" in evidence and "(not JSON)" in evidence
        assert "\x1b" not in screen_text(app)
        assert app.is_running  # nothing was clicked, nothing quit
    ledger.close()
