"""Quote verification against the real corpus (read-only) and small hand-written transcripts."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import write_records

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.gate.verify import MIN_WORDS, normalize, verify_quote
from dreamtui.core.ingest.transcripts import session_files

LOG = ("-Users-dain-workspace-claude-code-log-sample", "0d3a8e6f-290f-4105-a327-a2496e5e2a83")
RABBIT = ("-Users-dain-workspace-coderabbit-review-helper", "cb2e607c-c758-415a-8b45-c49e4631906a")
MANIFEST = ("-src-deep-manifest", "a7da6a22-facc-4fcd-8bab-f83c87862004")
SHARE = ("-samples-session-share", "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68")


def files_of(corpus: Path, which: tuple[str, str]) -> list[Path]:
    files = session_files(corpus, *which)
    assert files, which
    return files


# -- real quotes verify --------------------------------------------------------------------------

REAL = [
    # (session, quote, line, provenance): quotes, backslashes, newlines, non-ASCII, code
    (
        MANIFEST,
        'The above "status report" is very interesting and good to keep as milestone information.',
        68,
        "person",
    ),
    (
        LOG,
        "in @claude_code_log/templates/components/timeline.html \\\n\\\nAlso, I noticed that the colour",
        1,
        "person",
    ),
    (
        LOG,
        "Find `// TODO: hide vis-group instead` in @claude_code_log/templates/components/timeline.html",
        1,
        "person",
    ),
    (
        RABBIT,
        "`extract-coderabbit-feedback.py` → `extract_coderabbit_feedback.py` so Python can import it",
        76,
        "assistant",
    ),
    (
        MANIFEST,
        "```python\nelif member.isfile():\n    file_obj = tf.extractfile(member)\n    if file_obj is None:",
        206,
        "assistant",
    ),
    (
        SHARE,
        "One spoonful lands—the senses ignite,\nlayered flavors from morning to night",
        None,
        "assistant",
    ),
    (
        RABBIT,
        "Let's keep the name of the py file but change the pyproject script to reference it",
        15,
        "person",
    ),
]


@pytest.mark.parametrize(("which", "quote", "line", "prov"), REAL)
def test_real_quotes_verify_with_place_and_provenance(corpus: Path, which, quote, line, prov) -> None:
    result = verify_quote(quote, files_of(corpus, which))
    assert result.verified, result.reason
    best = result.best
    assert best is not None and best.provenance == prov and not best.copy
    if line is not None:
        assert best.line == line
    raw = Path(best.file).read_bytes().split(b"\n")[best.line - 1]
    record = json.loads(raw)
    assert best.uuid == record.get("uuid") and best.timestamp == record.get("timestamp")


def test_normalised_variants_of_a_real_quote_verify(corpus: Path) -> None:
    files = files_of(corpus, SHARE)
    # the transcript has an em dash and a line break; ASCII dash and a space are the same quote
    assert verify_quote(
        "One spoonful lands-the senses ignite, layered flavors from morning to night", files
    ).verified
    assert verify_quote(
        "The above \u201cstatus report\u201d is very interesting and good to keep", files_of(corpus, MANIFEST)
    ).verified


def test_quote_found_only_in_tool_output_reports_tool(corpus: Path) -> None:
    result = verify_quote("nothing to commit, working tree clean", files_of(corpus, MANIFEST))
    assert result.verified
    assert {m.provenance for m in result.matches} == {"tool"}
    result = verify_quote('"Which tar formats should be supported?"="Also .tgz"', files_of(corpus, MANIFEST))
    assert result.verified and result.best.provenance == "tool"


def test_every_place_is_reported_person_first(corpus: Path) -> None:
    quote = "How can I make this possible to install as a library with `uv`"
    result = verify_quote(quote, files_of(corpus, RABBIT))
    assert result.verified
    assert [m.line for m in result.matches] == [1, 3]
    assert all(m.provenance == "person" for m in result.matches)
    assert len(result.matches) == 2
    assert not result.matches[0].copy and result.matches[1].copy


# -- altered quotes never verify -----------------------------------------------------------------

ALTERED = [
    # a word changed
    (MANIFEST, 'The above "status report" is very interesting and useful to keep as milestone information.'),
    # words swapped
    (MANIFEST, 'The above "status report" is very good and interesting to keep as milestone information.'),
    # a paraphrase
    (MANIFEST, "The status report above is interesting and worth keeping as milestone information."),
    # a quote from another session
    (MANIFEST, "Let's keep the name of the py file but change the pyproject script to reference it"),
    # stitched across two records (line 45's prompt, then line 68's)
    (MANIFEST, 'Does the README correctly reflects what the code does? The above "status report" is'),
    # stitched across two blocks/records of the assistant
    (SHARE, "layered flavors from morning to night, Aromatic tendrils rise in fragrant steam"),
    # a dropped word
    (LOG, "You can set group.visible using the vis library which is work"),
]


@pytest.mark.parametrize(("which", "quote"), ALTERED)
def test_altered_quotes_never_verify(corpus: Path, which, quote) -> None:
    result = verify_quote(quote, files_of(corpus, which))
    assert not result.verified
    assert result.matches == []
    assert result.reason and result.reason.startswith("not found")


def test_quotes_across_a_whole_corpus_session_are_refused_when_other_session(corpus: Path) -> None:
    quote = "You can set group.visible using the vis library which is less work"
    assert verify_quote(quote, files_of(corpus, LOG)).verified
    for other in (RABBIT, MANIFEST, SHARE):
        assert not verify_quote(quote, files_of(corpus, other)).verified


# -- refusals -------------------------------------------------------------------------------------


def test_short_quotes_are_unverifiable(corpus: Path) -> None:
    result = verify_quote("Excellent work, thank you!", files_of(corpus, MANIFEST))
    assert not result.verified
    assert result.reason.startswith("unverifiable: too short")
    assert MIN_WORDS == 6


def test_a_long_distinctive_quote_of_few_words_verifies_and_a_short_one_does_not(tmp_path: Path) -> None:
    """A person's list of links or a long path is not found by chance, though it is only a few "words";
    a short pair of words still is (real shapes from a recorded answer that the word count refused)."""
    links = (
        "1、文档链接：https://wiki.example.cn/wiki/TOW2w3IQzisAi8kMFDMc7CAenEd,"
        "https://wiki.example.cn/wiki/Cdwow4U9ei55WWkvZUxcR2Nqnid"
    )
    path_said = "/home/kim/llm-train/experiment_configuration_summary.md这个实验"
    path = write_jsonl(
        tmp_path / "p" / "s.jsonl",
        [
            {"type": "user", "uuid": "u", "message": {"role": "user", "content": links}},
            {"type": "user", "uuid": "v", "message": {"role": "user", "content": path_said + "的结果呢"}},
        ],
    )
    assert verify_quote(links, [path]).verified
    assert verify_quote(path_said, [path]).best.uuid == "v"
    assert not verify_quote(links.replace("TOW2", "TOW3"), [path]).verified  # altered: never accepted
    one_token = verify_quote("https://wiki.example.cn/wiki/TOW2w3IQzisAi8kMFDMc7CAenEd", [path])
    assert not one_token.verified and one_token.reason.startswith("unverifiable: too short (1 words")
    assert not verify_quote("文档链接：https://wiki.example.cn", [path]).verified  # under 40 characters


def test_a_quote_of_only_dashes_and_quotes_is_refused_not_a_crash(tmp_path: Path) -> None:
    from dreamtui.core.gate.verify import verify_quotes

    path = write_jsonl(
        tmp_path / "p" / "s.jsonl", [{"type": "user", "message": {"content": "a - - - - - - b"}}]
    )
    for quote in ("- - - - - -", "\u2014 \u2014 \u2014 \u2014 \u2014 \u2014", "\" \" ' ' - -"):
        result = verify_quote(quote, [path])
        assert (
            not result.verified
            and result.reason == "unverifiable: the quote holds only spaces, quotes and dashes"
        )
    batch = verify_quotes(
        ["- - - - - -"] + [f"always run the linter before push {i}" for i in range(9)], [path]
    )
    assert not batch[0].verified and "only spaces" in (batch[0].reason or "")


@pytest.mark.parametrize("hidden", ["\u200b", "\u202e", "\u2066", "\U000e0041", "\ufeff"])
def test_hidden_characters_are_refused(corpus: Path, hidden: str) -> None:
    quote = f'The above "status report" is very {hidden}interesting and good to keep'
    result = verify_quote(quote, files_of(corpus, MANIFEST))
    assert not result.verified
    assert result.reason.startswith("refused")


def test_normalize_never_merges_different_words() -> None:
    assert normalize("a\u00a0 \n\tb") == "a b"
    assert normalize("“it’s” — done") == '"it\'s" - done'
    assert normalize("e\u0301t\u00e9") == "\u00e9t\u00e9"
    assert normalize("ab") != normalize("a b")


# -- hand-written transcripts: copies, sub-agents, broken lines ---------------------------------


def write_jsonl(path: Path, records: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        for rec in records:
            if isinstance(rec, bytes):
                fh.write(rec + b"\n")
            else:
                fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    return path


LESSON = "always run the migrations in a transaction so a failure leaves nothing half-applied"


def test_progress_copy_comes_after_the_sub_agent_original(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    main = write_jsonl(
        project / "s1.jsonl",
        [
            {
                "type": "progress",
                "uuid": "p1",
                "timestamp": "2026-01-01T00:00:02Z",
                "data": {
                    "type": "agent_progress",
                    "message": {
                        "type": "assistant",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": LESSON}]},
                    },
                },
            },
            b"{not json at all",
            b'{"type":"user","message":{"content":"bad utf8 \xff\xfe here"}}',
        ],
    )
    sub = write_jsonl(
        project / "s1" / "subagents" / "agent-abc1234.jsonl",
        [
            {
                "type": "assistant",
                "uuid": "a1",
                "timestamp": "2026-01-01T00:00:01Z",
                "isSidechain": True,
                "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": LESSON}]},
            },
        ],
    )
    result = verify_quote(LESSON, [main, sub])
    assert result.verified
    assert [(Path(m.file).name, m.line, m.copy) for m in result.matches] == [
        ("agent-abc1234.jsonl", 1, False),
        ("s1.jsonl", 1, True),
    ]
    assert result.best.provenance == "assistant" and result.best.uuid == "a1"
    assert result.matches[1].provenance == "tool"


def test_meta_and_person_ordering_and_unreadable_files(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "p" / "s.jsonl",
        [
            {"type": "user", "uuid": "m", "isMeta": True, "message": {"role": "user", "content": LESSON}},
            {"type": "user", "uuid": "u", "message": {"role": "user", "content": "please " + LESSON}},
        ],
    )
    result = verify_quote(LESSON, [path, tmp_path / "missing.jsonl"])
    assert [m.uuid for m in result.matches] == ["u", "m"]
    assert [m.provenance for m in result.matches] == ["person", "meta"]
    missing = verify_quote("this sentence is not anywhere in the file", [tmp_path / "missing.jsonl"])
    assert not missing.verified and "unreadable" in missing.reason


def test_huge_line_and_empty_file(tmp_path: Path) -> None:
    big = "x " * 2_000_000 + LESSON
    path = write_jsonl(
        tmp_path / "p" / "s.jsonl",
        [
            {
                "type": "user",
                "uuid": "t",
                "toolUseResult": {"stdout": big},
                "message": {"role": "user", "content": [{"type": "tool_result", "content": big}]},
            },
        ],
    )
    empty = tmp_path / "p" / "empty.jsonl"
    empty.write_bytes(b"")
    result = verify_quote(LESSON, [empty, path])
    assert result.verified and {m.provenance for m in result.matches} == {"tool"}


# -- CLI ------------------------------------------------------------------------------------------


def test_cli_verify_json_and_exit_codes(corpus: Path) -> None:
    main = files_of(corpus, MANIFEST)[0]
    runner = CliRunner()
    quote = 'The above "status report" is very interesting and good to keep as milestone information.'
    out = runner.invoke(cli, ["verify", str(main), quote, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["verified"] is True and data["reason"] is None
    assert data["matches"][0]["line"] == 68 and data["matches"][0]["provenance"] == "person"
    assert {"line", "uuid", "timestamp", "provenance"} <= set(data["matches"][0])
    out = runner.invoke(cli, ["verify", str(main), quote.replace("good", "great")])
    assert out.exit_code == 1
    assert "not found" in out.output
    out = runner.invoke(cli, ["verify", str(main), quote])
    assert out.exit_code == 0 and ":68" in out.output and "person" in out.output


def test_cli_verify_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["verify", str(tmp_path / "nope.jsonl"), "a b c d e f g"])
    assert out.exit_code == 2
    assert "nope.jsonl" in out.output and "Traceback" not in out.output


def test_non_ascii_in_decomposed_or_ascii_escaped_files_still_verifies(tmp_path: Path) -> None:
    text = "le café crème est servi après la réunion de l\u2019équipe à midi"
    nfd = unicodedata.normalize("NFD", text)
    escaped = tmp_path / "p" / "ascii.jsonl"
    escaped.parent.mkdir(parents=True)
    escaped.write_text(json.dumps({"type": "user", "uuid": "a", "message": {"content": text}}) + "\n")
    assert b"\\u00e9" in escaped.read_bytes()
    decomposed = write_jsonl(
        tmp_path / "p" / "nfd.jsonl", [{"type": "user", "uuid": "d", "message": {"content": nfd}}]
    )
    quote = "café crème est servi après la réunion de l'équipe"
    assert [m.uuid for m in verify_quote(quote, [escaped]).matches] == ["a"]
    assert [m.uuid for m in verify_quote(quote, [decomposed]).matches] == ["d"]
    assert not verify_quote(quote.replace("crème", "creme"), [escaped, decomposed]).verified


def test_chinese_and_japanese_quotes_count_two_characters_a_word(tmp_path: Path) -> None:
    said = (
        "我不希望创建项目级别的MCP配置文件，我希望的是MCP文件是用户级别的"  # a real person's words, unspaced
    )
    path = write_jsonl(
        tmp_path / "p" / "s.jsonl",
        [
            {"type": "user", "uuid": "u", "message": {"role": "user", "content": said}},
        ],
    )
    result = verify_quote(said, [path])
    assert result.verified and result.best.provenance == "person"
    short = verify_quote("我不希望创建", [path])  # six characters are three words: too easy to find by chance
    assert not short.verified and "too short (3 words" in short.reason
    assert not verify_quote(
        "我不希望创建项目级别的MCP配置文件，我希望的是MCP文件是系统级别的", [path]
    ).verified


# -- many quotes in one pass ---------------------------------------------------------------------


def _session_quotes(files: list[Path], rng) -> list[str]:
    """Real 8-14 word runs of person and assistant text in ``files``, and the same runs altered."""
    from dreamtui.core.ingest.formats import claude_code as records

    texts = []
    for path in files:
        for raw in path.read_bytes().splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                texts += [
                    p.text
                    for p in records.pieces(obj)
                    if p.role in ("person", "assistant")
                    and len(p.text.split(" ")) >= 16
                    and p.text == _at(obj, p.path)
                ]
    real = []
    for text in [rng.choice(texts) for _ in range(40)]:
        words = text.split(" ")
        size = rng.randint(8, 14)
        start = rng.randrange(0, len(words) - size)
        real.append(" ".join(words[start : start + size]))
    altered = []
    for quote in real[:20]:
        words = quote.split(" ")
        words[rng.randrange(len(words))] += "zq"
        altered.append(" ".join(words))
    variants = [q.replace("'", "\u2019").replace(" ", "  ") for q in real[:5]]  # normalised forms
    return real + altered + variants + ["too short to verify", "", real[0]]  # a repeat too


def _at(obj: object, path: tuple) -> object:
    """The value at ``path`` in a decoded record (None when there is none)."""
    for key in path:
        try:
            obj = obj[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return None
    return obj


@pytest.mark.parametrize("which", [LOG, RABBIT, MANIFEST, SHARE])
def test_batch_gives_exactly_what_one_by_one_gives(corpus: Path, which) -> None:
    import random

    from dreamtui.core.gate.verify import verify_quotes

    files = files_of(corpus, which)
    quotes = _session_quotes(files, random.Random(7))
    batch = verify_quotes(quotes, files)
    single = [verify_quote(q, files) for q in quotes]
    assert len(batch) == len(quotes)
    assert [(v.verified, v.matches, v.reason) for v in batch] == [
        (v.verified, v.matches, v.reason) for v in single
    ]
    assert sum(v.verified for v in batch[:40]) >= 35  # real quotes verify (every place reported)
    assert not any(v.verified for v in batch[40:60])  # altered ones never do
    assert batch[-1].matches == batch[0].matches and batch[-1].matches is not batch[0].matches


def test_batch_with_an_unreadable_file_says_so_for_each_quote(tmp_path: Path) -> None:
    from dreamtui.core.gate.verify import verify_quotes

    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": "u1",
                "timestamp": "2026-03-01T10:00:00Z",
                "message": {"role": "user", "content": "always run the linter before you push"},
            }
        )
        + "\n"
    )
    missing = tmp_path / "gone.jsonl"
    found, lost = verify_quotes(
        ["always run the linter before you push", "never run the linter before you push"], [path, missing]
    )
    assert found.verified and found.best is not None and found.best.line == 1
    assert not lost.verified and "gone.jsonl" in (lost.reason or "")


def test_batch_index_finds_quotes_however_the_writer_escaped_them(tmp_path: Path, monkeypatch) -> None:
    """The index of a batch blanks JSON escapes: a quote written after a newline escape, with
    \\uXXXX escapes (ensure_ascii), in NFD, with escaped slashes or letters, verifies exactly as alone."""
    from dreamtui.core.gate import verify
    from dreamtui.core.gate.verify import verify_quotes

    monkeypatch.setattr(verify, "INDEX_FROM", 2)  # a batch reads the index, one quote alone searches

    said = "please run the café linter/formatter before every single push today"
    texts = [
        "intro\n" + said,  # \n escape right before the first word
        said.replace("linter/", "linter\\"),  # a backslash in the text itself: another text
        unicodedata.normalize("NFD", said),  # decomposed é
        "tab\t" + said + "\tend",
        said.replace("K", "\u212a"),
        said.replace(" before ", "\nbefore\t"),  # escapes right before and after inner words
    ]
    lines = [
        json.dumps(
            {
                "type": "user",
                "uuid": f"u{i}",
                "timestamp": f"2026-03-01T10:00:0{i}Z",
                "message": {"role": "user", "content": t},
            },
            ensure_ascii=i % 2 == 0,
        )
        for i, t in enumerate(texts)
    ]
    # a writer that escapes letters and slashes (valid JSON, no ordinary writer does it)
    lines.append(
        '{"type":"user","uuid":"u9","message":{"role":"user","content":'
        '"please run the caf\\u00e9 \\u006cinter\\/formatter before every single push today"}}'
    )
    # the same, its words also glued in the string: one by one finds the escaped place, so must the batch
    lines.append(
        '{"type":"user","uuid":"u10","message":{"role":"user","content":"the_linter/formatter_before_'
        'every_single_push\\n then run the \\u006cinter\\/formatter before every single push again"}}'
    )
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    quotes = [
        said,
        "run the café linter/formatter before every single push",
        "please run the cafe linter/formatter before every single push today",
        "the café linter/formatter before every single push today and",
    ]
    quotes += [f"{q} " for q in quotes] + [
        "please run the café linter before every push",
        "linter/formatter before every single push today",
        "run the linter/formatter before every single push",
    ]
    batch = verify_quotes(quotes, [path])
    single = [verify_quote(q, [path]) for q in quotes]
    assert [(v.verified, v.matches, v.reason) for v in batch] == [
        (v.verified, v.matches, v.reason) for v in single
    ]
    # escaped slashes and letters are not searched for (alone or in a batch): lines 2 and 7 are not places
    assert batch[0].verified and {m.line for m in batch[0].matches} == {1, 3, 4, 5, 6}
    assert {m.line for m in batch[-2].matches} == {1, 3, 4, 5, 6}
    assert [m.line for m in batch[-1].matches] == [8]
    assert not batch[2].verified and not batch[-3].verified


def test_batch_index_read_in_small_slices_gives_the_same_places(corpus: Path, monkeypatch) -> None:
    """A big file is indexed in slices of whole lines (memory stays bounded): tiny slices change nothing."""
    import random

    from dreamtui.core.gate import verify
    from dreamtui.core.gate.verify import verify_quotes

    files = files_of(corpus, MANIFEST)
    quotes = _session_quotes(files, random.Random(11))
    whole = verify_quotes(quotes, files)
    monkeypatch.setattr(verify, "_INDEX_SLICE", 1000)
    sliced = verify_quotes(quotes, files)
    assert [(v.verified, v.matches) for v in sliced] == [(v.verified, v.matches) for v in whole]
    assert sum(v.verified for v in sliced) >= 35


def test_cli_verify_reads_the_quote_from_stdin_and_takes_quotes_that_begin_with_a_dash(
    tmp_path: Path,
) -> None:
    path = tmp_path / "-home-kim-src-app" / "s1.jsonl"
    path.parent.mkdir()
    lesson = "- never push to main directly, open a pull request so CI runs first"
    path.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": "u1",
                "timestamp": "2026-11-28T10:00:00Z",
                "sessionId": "s1",
                "message": {"role": "user", "content": f"Rules:\n{lesson}\n- keep it short"},
            }
        )
        + "\n"
    )
    runner = CliRunner()
    for args, stdin in (
        ([str(path), lesson], None),
        ([str(path), "--", lesson], None),
        ([str(path), "-"], lesson + "\n"),
        ([str(path), "-", "--json"], lesson),
    ):
        out = runner.invoke(cli, ["verify", *args], input=stdin)
        assert out.exit_code == 0, (args, out.output)
        assert "verified" in out.output
    out = runner.invoke(
        cli, ["verify", str(path), "-"], input="- never force-push to main, a colleague lost work\n"
    )
    assert out.exit_code == 1 and "not verified" in out.output
    out = runner.invoke(cli, ["verify", str(path), "-"], input="\n")
    assert out.exit_code == 2 and "no quote on standard input" in out.output


@pytest.mark.usefixtures("git_home")
def test_verify_a_quote_with_a_lone_surrogate(config: Config) -> None:
    from dreamtui.core.gate.verify import verify_quote

    text = "Always run the migrations before the test suite \udcff because the schema drifts otherwise."
    path = write_records(config.transcripts / "acme", [("user", text)])
    assert verify_quote("the test suite \udcff because the schema drifts", [path]).verified
    assert not verify_quote("\udcff\udcfe one two three four five six", [path]).verified
    result = CliRunner().invoke(cli, ["verify", str(path), "\udcff\udcfe one two three four five six"])
    assert result.exit_code == 1, result.output
    assert "not verified" in result.output


# -- the batch index keys every script -----------------------------------------------------------

# a person's words in scripts with and without spaces between words, each long enough to hold quotes
SCRIPTS = {
    "zh": "我不希望创建项目级别的MCP配置文件，我希望的是MCP文件是用户级别的，这样所有项目都能共用同一份配置",
    "ja": "このリポジトリではテストを実行する前に必ずマイグレーションを適用してください。スキーマがずれるからです",
    "vi": "bạn làm gì cũng cần giải thích cho tôi để tôi có thể hiểu và huấn luyện lại mô hình sau này nhé",
    "ru": "всегда запускай линтер перед тем как отправлять изменения в основную ветку нашего репозитория",
    "ko": "테스트를 실행하기 전에 항상 데이터베이스 마이그레이션을 먼저 적용해야 합니다 그렇지 않으면 실패합니다",
}


def _script_session(tmp_path: Path) -> Path:
    """One session holding each text as the person's (NFC), the assistant's (NFD), inside a tool's
    output after a line break, written by an ``ensure_ascii`` writer, and in filler lines that hold
    the same letters in another order (so single characters cannot tell the lines apart)."""
    rows: list[object] = []
    for lang, text in SCRIPTS.items():
        rows.append({"type": "user", "uuid": f"{lang}-person", "message": {"role": "user", "content": text}})
        rows.append(
            {
                "type": "assistant",
                "uuid": f"{lang}-nfd",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": unicodedata.normalize("NFD", text)}],
                },
            }
        )
        rows.append(
            json.dumps(
                {"type": "user", "uuid": f"{lang}-ascii", "message": {"role": "user", "content": text}},
                ensure_ascii=True,
            ).encode()
        )
        for k in range(6):
            pieces = text.split(" ") if " " in text else list(text)
            shuffled = pieces[k % 3 :: 3] + pieces[1::2] + pieces[::4]
            rows.append(
                {
                    "type": "assistant",
                    "uuid": f"{lang}-filler{k}",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": " ".join(shuffled)}],
                    },
                }
            )
    tool_only = (
        "ログの出力: 데이터베이스 연결이 끊어졌습니다 다시 시도하세요 — проверьте настройки сети сейчас"
    )
    rows.append(
        {
            "type": "user",
            "uuid": "tool",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": f"$ deploy\n{tool_only}\nexit 1"}
                ],
            },
        }
    )
    return write_jsonl(tmp_path / "p" / "scripts.jsonl", rows)


def _script_quotes() -> list[str]:
    quotes = []
    for text in SCRIPTS.values():
        if " " in text:
            words = text.split(" ")
            quotes += [" ".join(words[1:9]), " ".join(words[4:12])]
        else:
            quotes += [text[2:20], text[10:34]]
    altered = [q[:-3] + "x" + q[-2:] for q in quotes]  # one letter changed near the end
    variants = [unicodedata.normalize("NFD", q) for q in quotes[::2]]  # the same quotes, decomposed
    tool = ["데이터베이스 연결이 끊어졌습니다 다시 시도하세요 — проверьте настройки"]
    return quotes + altered + variants + tool


def test_batch_index_finds_every_script_exactly_as_one_by_one(tmp_path: Path, monkeypatch) -> None:
    """Quotes in Chinese, Japanese, Vietnamese, Russian and Korean: the batch (index of pieces
    and characters) gives every place one by one gives, and no other, in NFC, NFD and
    \\u-escaped records; altered quotes verify in neither; a quote only in tool output says tool."""
    from dreamtui.core.gate import verify
    from dreamtui.core.gate.verify import verify_quotes

    monkeypatch.setattr(verify, "INDEX_FROM", 2)  # a batch reads the index, one quote alone searches
    path = _script_session(tmp_path)
    quotes = _script_quotes()
    single = [verify_quote(q, [path]) for q in quotes]
    batch = verify_quotes(quotes, [path])
    assert [(v.verified, v.matches, v.reason) for v in batch] == [
        (v.verified, v.matches, v.reason) for v in single
    ]
    n = 2 * len(SCRIPTS)
    for v in batch[:n]:  # each real quote: the person's record, the decomposed and the escaped copies
        assert v.verified and {m.uuid.split("-")[1] for m in v.matches} >= {"person", "nfd", "ascii"}
        assert v.best.provenance == "person"
    assert not any(v.verified for v in batch[n : 2 * n])
    assert all(v.verified for v in batch[2 * n : -1])
    assert batch[-1].verified and {m.provenance for m in batch[-1].matches} == {"tool"}


def test_batch_finds_text_in_any_normal_form_where_one_by_one_does(tmp_path: Path, monkeypatch) -> None:
    """A record may hold a text in a form neither NFC nor NFD (a precomposed letter and a combining
    tone mark, as some Vietnamese keyboards type; Hangul as jamo; a singleton) while its composed
    words also sit in the same string, glued: one by one finds the quote there (its needles are in
    the string, the string normalises to the quote), so the batch must too, although no key is
    whole on that line."""
    from dreamtui.core.gate import verify
    from dreamtui.core.gate.verify import verify_quotes

    monkeypatch.setattr(verify, "INDEX_FROM", 2)
    texts = {
        "vi": "bạn cần giải thích cho tôi biết để tôi có thể hiểu hết mọi thứ",
        "ko": "테스트를 실행하기 전에 항상 데이터베이스 마이그레이션을 먼저 적용해야 합니다",
        "sv": "kör alltid linter på Ångström filen innan du pushar ändringarna idag",
    }
    odd = {
        # ế as ê + acute, ệ as ê + dot below: canonically the same, bytes of neither form
        "vi": texts["vi"].replace("ế", "ê\u0301").replace("ể", "ê\u0309").replace("ạ", "a\u0323"),
        "ko": unicodedata.normalize("NFD", texts["ko"][:12]) + texts["ko"][12:],  # jamo, then syllables
        "sv": texts["sv"].replace("Å", "\u212b"),  # the Angstrom sign, which NFC makes Å
    }
    rows = []
    for lang, text in texts.items():
        glued = "_".join(text.split(" "))  # every needle on the line, no key whole
        rows.append(
            {
                "type": "user",
                "uuid": f"{lang}-odd",
                "message": {"role": "user", "content": f"{glued}\n{odd[lang]}"},
            }
        )
        rows.append({"type": "user", "uuid": f"{lang}-glued", "message": {"role": "user", "content": glued}})
    path = write_jsonl(tmp_path / "p" / "forms.jsonl", rows)
    quotes = [" ".join(t.split(" ")[1:10]) for t in texts.values()]
    quotes += [q.replace(q.split(" ")[4], "khác") for q in quotes]
    single = [verify_quote(q, [path]) for q in quotes]
    batch = verify_quotes(quotes, [path])
    assert [(v.verified, v.matches, v.reason) for v in batch] == [
        (v.verified, v.matches, v.reason) for v in single
    ]
    assert [v.verified for v in batch] == [True, True, True, False, False, False]
    assert all([m.uuid for m in v.matches] == [v.matches[0].uuid] for v in batch[:3])
    assert all(v.matches[0].uuid.endswith("-odd") for v in batch[:3])


def test_batch_splits_pieces_at_every_kind_of_space(tmp_path: Path, monkeypatch) -> None:
    """Words a record separates with a no-break space, a line separator, an ideographic space or a
    narrow no-break space (raw or escaped) are whole keys of the line: the batch finds the quote,
    whether it has keys beyond ASCII or only ASCII ones."""
    from dreamtui.core.gate import verify
    from dreamtui.core.gate.verify import verify_quotes

    monkeypatch.setattr(verify, "INDEX_FROM", 2)
    said = (
        "always\u00a0run the\u2028linter\u3000before every\u202fsingle push to the\u2003main branch "
        "và luôn\u00a0kiểm\u3000tra\u2029trước khi\u00a0gửi"
    )
    rows = [{"type": "user", "uuid": "raw", "message": {"role": "user", "content": said}}]
    path = write_jsonl(tmp_path / "p" / "spaces.jsonl", rows)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(
            json.dumps({"type": "user", "uuid": "escaped", "message": {"role": "user", "content": said}})
            + "\n"
        )
    english = [
        "always run the linter before every single push to the main",
        "run the linter before every single push to the main branch",
    ]
    vietnamese = ["the main branch và luôn kiểm tra trước khi gửi", "và luôn kiểm tra trước khi gửi"]
    for quotes in (
        english + ["never run the linter before every single push to the main"],
        english + vietnamese,
    ):
        batch = verify_quotes(quotes, [path])
        assert [(v.verified, v.matches) for v in batch] == [
            (v.verified, v.matches) for v in (verify_quote(q, [path]) for q in quotes)
        ]
        assert [v.verified for v in batch] == [
            True,
            True,
            *[q.startswith(("the main", "và")) for q in quotes[2:]],
        ]
        assert {m.uuid for m in batch[0].matches} == {"raw", "escaped"}


def test_index_keys_are_whole_pieces_and_characters_a_line_holding_the_quote_holds() -> None:
    """The keys a line must hold are the quote's inner pieces (what lies between two spaces) in NFC
    and, for text without spaces, its characters: never a piece normalisation may have made from
    something else (quotes, dashes, ``;``, `````, ``K``), nor the quote's first or last piece (a quote
    may begin or end mid-word)."""
    from dreamtui.core.gate.verify import safe_chars, safe_pieces

    assert safe_pieces(normalize("run the linter/formatter before every push")) == {
        b"the",
        b"linter/formatter",
        b"before",
        b"every",
    }
    assert safe_pieces(
        normalize("so \u201cdon\u2019t\u201d push \u2014 a re-run; `make` 5K (then) wait")
    ) == {b"push", b"a", b"(then)"}
    vi = normalize("giải thi\u0301ch cho tôi để")  # typed decomposed, keyed composed
    assert safe_pieces(vi) == {"thích".encode(), b"cho", "tôi".encode()}
    assert safe_pieces(normalize("我希望的是 MCP 文件是用户级别的")) == {b"MCP"}
    assert {"用", "户"} <= safe_chars(normalize("MCP文件是用户级别的"))
    assert safe_chars("plain ASCII words only here") == frozenset()


def test_lines_whose_text_may_not_be_nfc_and_every_space_beyond_ascii_are_known() -> None:
    """A line is searched for keys beyond ASCII whatever it holds when it has a character that makes
    its text differ from NFC (a combining mark, a character NFC replaces or joins to the one before);
    the index splits pieces at every whitespace character beyond ASCII. Both lists checked against
    the whole of Unicode."""
    import re
    import sys

    from dreamtui.core.gate import verify

    joins = set()
    for code in range(0x80, sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            joins.add(chr(int(parts[1], 16)))
    joins |= {chr(c) for c in range(0x1161, 0x1176)} | {chr(c) for c in range(0x11A8, 0x11C3)}  # Hangul jamo
    assert all(verify._unstable(c) for c in joins)
    for stable in "éảệ가用ыß→│":
        assert not verify._unstable(stable), stable
    for unstable in ("\u0301", "\u0323", "\u212b", "\u2000", "\uf900", "\u09be", "\u1161", "\u3099"):
        assert verify._unstable(unstable), hex(ord(unstable))
    spaces = [chr(c) for c in range(0x80, sys.maxunicode + 1) if chr(c).isspace()]
    wide = b"".join(c.encode() + b"x" for c in spaces)
    assert len(verify._WIDE_SPACE.findall(wide)) == len(spaces)
    others = b"".join(
        chr(c).encode() for c in range(0x80, 0x3100) if not chr(c).isspace() and not 0xD800 <= c < 0xE000
    )
    assert verify._WIDE_SPACE.search(others) is None
    assert not re.search(rb"\s", verify._PIECE_BREAKS[33:127])


_PIECES = [
    "the",
    "linter",
    "K",
    "café",
    "thích",
    "cho",
    "tôi",
    "用户",
    "级别",
    "配置",
    "テスト",
    "всегда",
    "ветку",
    "데이터",
    "ó",
    "e\u0301",
    "\u212a",
    "’",
    "“",
    "—",
    "-",
    "'",
    '"',
    "\\",
    "/",
    "\u00a0",
    "\u3000",
    "\n",
    "\t",
    "  ",
    "。",
    "，",
    ".",
    ",",
    ":",
    "(",
    ")",
    "1",
    "42",
    "\U0001f600",
    "\u037e",
    "\ufffd",
    # forms neither NFC nor NFD, Hangul jamo, singletons, spaces beyond ASCII, punctuation in words
    "ê\u0301",
    "a\u0323",
    "\u1100\u1161",
    "\u212b",
    "\u0958",
    "e\u0316\u0301",
    "\u2028",
    "\u202f",
    "(đ)",
    "x/y",
    "a=b",
    "<b>",
    "được,",
]


def test_batch_equals_one_by_one_on_random_text_in_every_form(tmp_path: Path, monkeypatch) -> None:
    """Random text in many scripts, with curly quotes, dashes, odd spaces, escapes, combining
    marks, jamo, singletons and emoji, written as UTF-8, NFD, ``ensure_ascii``, with escaped slashes,
    or as it came after its words glued in NFC: every quote cut from it (and every altered one) gets
    from the batch index exactly what the one-quote search gives."""
    import random

    from dreamtui.core.gate import verify
    from dreamtui.core.gate.verify import verify_quotes

    monkeypatch.setattr(verify, "INDEX_FROM", 2)  # a batch reads the index, one quote alone searches
    rng = random.Random(16)
    for case in range(48):
        texts = [
            " ".join(rng.choice(_PIECES) + rng.choice(["", "", rng.choice(_PIECES)]) for _ in range(40))
            for _ in range(3)
        ]
        lines = []
        for i, text in enumerate(texts):
            form = case % 4
            body = unicodedata.normalize("NFD", text) if form == 1 else text
            if form == 3:  # the words glued in NFC (every needle on the line), then the text as it came
                body = "_".join(unicodedata.normalize("NFC", text).split(" ")) + "\n" + text
            record = {
                "type": "user" if i % 2 else "assistant",
                "uuid": f"c{case}-{i}",
                "message": {"role": "user", "content": body},
            }
            line = json.dumps(record, ensure_ascii=form == 2)
            lines.append(line.replace("/", "\\/") if case % 5 == 4 else line)  # a writer escaping slashes
        path = tmp_path / f"case{case}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        quotes = []
        for _ in range(12):
            text = rng.choice(texts)
            start = rng.randrange(len(text) // 2)
            quote = text[start : start + rng.randint(15, 60)]
            quotes.append(quote)
            quotes.append(quote[:-2] + "q" + quote[-1:])
        batch = verify_quotes(quotes, [path])
        single = [verify_quote(q, [path]) for q in quotes]
        assert [(v.verified, v.matches, v.reason) for v in batch] == [
            (v.verified, v.matches, v.reason) for v in single
        ], case


def test_normalize_folds_whitespace_exactly_as_the_regex_did() -> None:
    """``normalize`` folds whitespace with ``str.split``: the same characters as ``\\s`` (every
    Unicode space, line and paragraph separator, the ASCII file/group/record/unit separators)."""
    import re
    import sys

    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if re.fullmatch(r"\s", chr(c)))
    assert spaces == "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    text = f"a{spaces}b \u201cc\u201d\u2014d  e\n"
    assert normalize(text) == 'a b "c"-d e'
    assert normalize(spaces) == ""


@pytest.mark.parametrize("slice_bytes", [8 * 1024 * 1024, 100])
def test_batch_index_numbers_lines_of_a_crlf_file_without_a_last_line_break(
    tmp_path: Path, monkeypatch, slice_bytes: int
) -> None:
    from dreamtui.core.gate import verify
    from dreamtui.core.gate.verify import verify_quotes

    monkeypatch.setattr(verify, "INDEX_FROM", 2)
    monkeypatch.setattr(verify, "_INDEX_SLICE", slice_bytes)
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b"\r\n".join(
            json.dumps(
                {
                    "type": "user",
                    "uuid": f"u{i}",
                    "message": {
                        "content": f"note {i}: always run the linter number {i} before you push the branch"
                    },
                }
            ).encode()
            for i in range(30)
        )
    )
    quotes = [f"always run the linter number {i} before you push" for i in range(30)]
    batch = verify_quotes(quotes, [path])
    assert [(v.best.line, v.best.uuid) for v in batch] == [(i + 1, f"u{i}") for i in range(30)]
    assert [v.matches for v in batch] == [verify_quote(q, [path]).matches for q in quotes]
