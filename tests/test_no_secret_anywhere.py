"""No secret a person typed reaches disk, git, the ledger, the terminal or a model.

Every supported secret format is planted in a person's words in a real transcript. Then a person runs
the real CLI (``dreamtui dream``, ``candidates``, ``accept`` after an edit, ``reject`` with a reason that
quotes a secret, ``review``, ``briefing``, ``digest``, ``verify``, ``stats``), and the test looks for
every planted secret in: every command's output, ``git log -p --all`` and every git object (reachable
or not), every file under the memory and state folders (the ledger's raw SQLite and WAL bytes
included), every row of every ledger table, and (with Claude) every request sent to the model.

Fake credentials are assembled at run time so this file never holds one in clear.
"""

from __future__ import annotations

import base64
import json
import os
import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamtui.core.secrets import RULE_NAMES, rules_found
from tests.fakes.anthropic_server import FakeAnthropic, lesson, ok
from tests.fakes.transcript import write_session

PROJECT = "-home-kim-shop"
WRITTEN = 1773180000.0  # 2026-03-10T22:00:00Z: the session is quiet by the cycle's time
NOW = "2026-03-10T23:00:00Z"
MAIN = "from dreamtui.cli.main import main; main()"
PEM_BODY = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0" + "/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
]

# rule -> the secret, assembled so no credential sits in this file in clear
PLANTED: dict[str, str] = {
    "aws-access-key": "AKIA" + "Q3EGRT7ZKLPX2M4N",
    "google-api-key": "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "github-token": "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
    "gitlab-token": "glpat-" + "xY7zK2mP9qLr3TvW8nBc",
    "slack-token": "xoxb-" + "2945817360-5539011428-Zq8TkLm3VbN2xW",
    "slack-webhook": "https://hooks.slack.com/services/" + "T024BE7LD/B01HNB5V9QE/Xk2mP9qLr7TzW3vN8sYb4Jf6",
    "stripe-key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "npm-token": "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "anthropic-key": "sk-ant-api03-" + "Xk2mP9qLr7TzW3vN8sYb4Jf6Hg1Dc5Ae0Ru-_Qw9Ty8Ui7Op6",
    "openai-key": "sk-proj-" + "Vb4Nc1Qw9Er6Ty3Ui5Op0AsXk2mP9qLr7Tz",
    "jwt": "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url-credentials": "Zx81kLm2" + "QpW7",
    "bearer-token": "q8Lm2Zx7" + "Vb4Nc1Qw9Er6Ty3U",
    "password-in-prose": "hunter2" + "-Xy9!",
    "generic-secret": "Tr0ub4dor" + "93xyzQ",
    "private-key": "\n".join(PEM_BODY),
    # formats of gitleaks' rule set, and evasions the scanner reads through
    "aws-secret-key": "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY",
    "azure-storage-key": base64.b64encode(random.Random(23).randbytes(64)).decode(),
    "huggingface-access-token": "hf_" + "jCBaQngSHiHDRYOcsMcifUcysGyaiybUWz",
    "sendgrid-api-token": "SG."
    + "aB3dE6gH9jK2mN5pQ8sT1v"
    + "."
    + "W4yZ7bC0eF3hJ6aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC",
    "twilio-api-key": "SK" + "3f9a0c1d2e4b5a6978877665544332a1",
    "token-in-prose": "ghp_" + "Zq8TkLm3VbN2xW7u9Rt5Ye1Wq7Op3As6Df0",  # one short of a GitHub token
    "github-token (split by a zero-width space)": "ghp_" + "Hq8Lm2Zx7Vb4Nc1Q\u200bw9Er6Ty3Ui5Op0AsXk2m",
    "gitlab-token (in fullwidth letters)": "".join(
        chr(ord(c) + 0xFEE0) for c in "glpat-" + "Kd9sP2xQ7mLr4TvW8nBz"
    ),
}
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PLANTED["private-key"] + "\n-----END RSA PRIVATE KEY-----"

# a person's words, each holding one secret, each shaped like a lesson or a briefing item
PERSON_WORDS: list[str] = [
    f"Never use the old AWS key {PLANTED['aws-access-key']} in scripts, it was revoked last week.",
    f"Never call the maps API with the browser key {PLANTED['google-api-key']} from the backend.",
    f"Always push with the deploy token {PLANTED['github-token']} only from the release job.",
    f"We decided to mirror the repo with the GitLab token {PLANTED['gitlab-token']} every night.",
    f"Never post to Slack with the bot token {PLANTED['slack-token']} from a laptop.",
    f"Always send release notes to {PLANTED['slack-webhook']} after a deploy.",
    f"Never put the Stripe key {PLANTED['stripe-key']} in the frontend bundle.",
    f"The deploy is blocked because the npm token {PLANTED['npm-token']} keeps failing on publish.",
    f"Never commit the Anthropic key {PLANTED['anthropic-key']} to the repository.",
    f"Never log the OpenAI key {PLANTED['openai-key']} in the request middleware.",
    f"Always test the admin pages with the session token {PLANTED['jwt']} on staging.",
    f"Never connect with postgres://billing:{PLANTED['url-credentials']}@db.internal:5432/billing from CI.",
    f"Always call the staging API with the header Authorization: Bearer {PLANTED['bearer-token']} in smoke tests.",
    f"Remember that the password is {PLANTED['password-in-prose']} for the staging admin account.",
    f"Always export DB_PASSWORD={PLANTED['generic-secret']} before running the migrations locally.",
    f"Never paste the deploy key into chat again, this one:\n{PEM}\nwas rotated this morning.",
    f"Always run the billing export with secret {PLANTED['aws-secret-key']} from the ops box only.",
    f"Never hand out AccountKey={PLANTED['azure-storage-key']} of the storage account to vendors.",
    f"We decided to pull models with the token {PLANTED['huggingface-access-token']} in CI only.",
    f"Never send mail from staging with the key {PLANTED['sendgrid-api-token']} again.",
    f"Always rotate the Twilio key {PLANTED['twilio-api-key']} after the on-call week.",
    f"Always tag releases with the CI token {PLANTED['token-in-prose']} from the release job.",
    f"Never push with {PLANTED['github-token (split by a zero-width space)']} from a laptop.",
    f"Always mirror the wiki with {PLANTED['gitlab-token (in fullwidth letters)']} at night.",
]


def fragments(secret: str) -> list[str]:
    """What must never be found: the secret, and distinctive pieces of it (a cut-off secret leaks too)."""
    out = [secret]
    for part in secret.split("\n"):
        body = part[len(part) // 3 :]
        out += [part, body[:10], part[-10:]]
    return list(dict.fromkeys(p for p in out if len(p) >= 8))


def test_every_planted_secret_is_a_supported_format() -> None:
    """The plants cover every rule the scanner has, and each is found by its own rule."""
    assert set(RULE_NAMES) <= {name.split(" (")[0] for name in PLANTED}
    for name, words in zip(PLANTED, PERSON_WORDS, strict=True):
        assert name.split(" (")[0] in rules_found(words), name


# -- running dreamtui as a person does ----------------------------------------------------------


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DREAMTUI_") and k not in {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}
    }
    env.update(
        {
            "DREAMTUI_TRANSCRIPTS": str(home / "transcripts"),
            "DREAMTUI_MEMORY": str(home / "memory"),
            "DREAMTUI_STATE": str(home / "state"),
            "DREAMTUI_CONFIG": str(home / "config.toml"),
            "DREAMTUI_NOW": NOW,
            "HOME": str(home),
            "GIT_AUTHOR_NAME": "Kim",
            "GIT_AUTHOR_EMAIL": "kim@example.com",
            "GIT_COMMITTER_NAME": "Kim",
            "GIT_COMMITTER_EMAIL": "kim@example.com",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    env.update(extra)
    return env


class Person:
    """Runs the real CLI in ``home`` and keeps everything it printed."""

    def __init__(self, home: Path, **env: str) -> None:
        self.home = home
        self.env = env_for(home, **env)
        self.printed: dict[str, bytes] = {}

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[bytes]:
        out = subprocess.run(
            [sys.executable, "-c", MAIN, *args], env=self.env, capture_output=True, timeout=180
        )
        name = f"#{len(self.printed) // 2 + 1} `dreamtui {' '.join(args)[:80]}`"
        self.printed[f"stdout of {name}"] = out.stdout
        self.printed[f"stderr of {name}"] = out.stderr
        if ok:
            assert out.returncode == 0, (args, out.stderr.decode(errors="replace"))
        return out


def make_home(tmp_path: Path, extractor: str) -> tuple[Path, Path]:
    home = tmp_path / "home"
    (home / "transcripts").mkdir(parents=True)
    (home / "config.toml").write_text(f'extractor = "{extractor}"\n')
    turns: list[tuple[str, str]] = []
    for words in PERSON_WORDS:
        turns += [("person", words), ("assistant", "Understood, I will keep that in mind from now on.")]
    path = write_session(home / "transcripts", turns, project=PROJECT)
    os.utime(path, (WRITTEN, WRITTEN))
    return home, path


def the_persons_day(person: Person, transcript: Path) -> None:
    """Dream, look at the proposals, accept (after an edit), reject quoting a secret, review, brief."""
    person.run("dream")
    listed = json.loads(person.run("candidates", "--json").stdout)
    pending = [c for c in listed if c["status"] == "pending"]
    assert len(pending) >= 3, listed
    flagged = [c for c in pending if c["secrets"]]
    assert flagged, "the planted secrets are flagged on the proposals"
    person.run("candidates")
    refused = person.run("accept", flagged[0]["id"], ok=False)
    assert refused.returncode != 0 and b"secret" in refused.stderr
    person.run(
        "accept",
        flagged[0]["id"],
        "--claim",
        "Keep cloud keys out of scripts; read them from the vault.",
        "--why",
        "Old keys leak through scripts.",
        "--how",
        "Use the vault CLI.",
    )
    person.run(
        "reject",
        flagged[1]["id"],
        "--reason",
        f"it shows the key {PLANTED['stripe-key']}, too specific",
        "--category",
        "other",
    )
    person.run("review", "--date", NOW[:10])
    person.run("briefing", "--pending")
    person.run("briefing", "--accept")
    person.run("briefing")
    person.run("briefing", "--history")
    person.run("stats")
    person.run("digest", str(transcript))
    person.run("digest", str(transcript), "--json")
    person.run("verify", str(transcript), "Never use the old AWS key " + PLANTED["aws-access-key"], ok=False)


# -- where a secret could end up --------------------------------------------------------------


def _files(root: Path) -> Iterator[Path]:
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            yield Path(dirpath) / name


def everything_written(home: Path) -> dict[str, bytes]:
    """Every place a secret could have been put: git history and objects, every file under the memory
    and state folders, every ledger row."""
    memory, state = home / "memory", home / "state"
    found: dict[str, bytes] = {}

    def git(*args: str) -> bytes:
        return subprocess.run(["git", "-C", str(memory), *args], capture_output=True, check=True).stdout

    found["git log -p --all"] = git("log", "-p", "--all", "--format=fuller")
    found["every git object"] = git("cat-file", "--batch-all-objects", "--batch", "--unordered")
    for path in [*_files(memory), *_files(state)]:
        found[str(path.relative_to(home))] = path.read_bytes()
    conn = sqlite3.connect(state / "ledger.sqlite3")
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()  # noqa: S608 (names from sqlite_master)
            found[f"ledger table {table}"] = repr(rows).encode()
    finally:
        conn.close()
    return found


def leaks(places: dict[str, bytes]) -> list[tuple[str, str]]:
    """(rule, place) for every planted secret found anywhere."""
    out: list[tuple[str, str]] = []
    for rule, secret in PLANTED.items():
        for piece in fragments(secret):
            needles = {piece.encode(), json.dumps(piece)[1:-1].encode()}
            for where, data in places.items():
                if any(n in data for n in needles):
                    out.append((rule, where))
    return sorted(set(out))


def test_no_planted_secret_is_found_anywhere_after_a_dream_an_accept_and_a_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home, transcript = make_home(tmp_path, "heuristic")
    # the search finds every planted secret where it really is: in the transcript
    assert {rule for rule, _ in leaks({"the transcript": transcript.read_bytes()})} == set(PLANTED)
    person = Person(home)
    the_persons_day(person, transcript)
    places = {**everything_written(home), **person.printed}
    assert (home / "memory" / "briefing.md").is_file()
    assert any(p.startswith("memory/reviews/") for p in places)
    found = leaks(places)
    with capsys.disabled():
        print(
            f"\nplanted {len(PLANTED)} secrets ({len(PERSON_WORDS)} person turns); searched {len(places)} "
            f"places; found {len(found)}"
        )
    assert found == []


def test_no_planted_secret_reaches_claude_or_disk_when_claude_extracts(tmp_path: Path) -> None:
    """With the anthropic extractor against the fake API: nothing sent to the model holds a secret,
    and a reply that echoes one is redacted before it is stored or written (the briefing is made by code
    from accepted memories and the sessions, never by the model)."""
    home, transcript = make_home(tmp_path, "anthropic")
    quote = "Understood, I will keep that in mind from now on."
    echoed = f"Never put the Stripe key {PLANTED['stripe-key']} in the frontend bundle."
    with FakeAnthropic() as server:
        server.script.append(ok([lesson(quote, echoed, why=f"it leaked as {PLANTED['npm-token']}")]))
        person = Person(home, ANTHROPIC_API_KEY="test-key-not-secret", ANTHROPIC_BASE_URL=server.url)
        person.run("dream", "--yes")  # the first dream with a model asks first
        person.run("candidates")
        person.run("briefing", "--pending")
        person.run("briefing", "--accept")
        sent = {
            f"request {i} to {r.path}": json.dumps(r.body).encode() for i, r in enumerate(server.requests)
        }
    assert len(sent) == 1  # the extraction (the briefing is made without a model)
    assert b"[REDACTED:" in sent["request 0 to /v1/messages"]  # the digest went out redacted
    claims = [c["claim"] for c in json.loads(person.run("candidates", "--json").stdout)]
    assert claims == ["Never put the Stripe key [REDACTED:stripe-key] in the frontend bundle."]
    assert (home / "memory" / "briefing.md").is_file()
    assert leaks({**sent, **everything_written(home), **person.printed}) == []


# -- each sink on its own --------------------------------------------------------------------------

STRIPE = PLANTED["stripe-key"]


def test_the_memory_writer_redacts_and_puts_earlier_bytes_back_verbatim(tmp_path: Path) -> None:
    from dreamtui.core.memory import layout

    layout.atomic_write(tmp_path, "note.md", f"key {STRIPE}\n".encode() + b"\xff raw byte\n")
    assert (tmp_path / "note.md").read_bytes() == b"key [REDACTED:stripe-key]\n\xff raw byte\n"
    assert layout.storable(f"key {STRIPE}".encode()) == b"key [REDACTED:stripe-key]"
    layout.atomic_write(tmp_path, "old.md", f"key {STRIPE}\n".encode(), verbatim=True)
    assert STRIPE in (tmp_path / "old.md").read_text()


def test_commit_messages_are_redacted(tmp_path: Path, git_home: Path) -> None:
    from dreamtui.core.memory import gitops

    repo = gitops.open_repo(tmp_path / "memory")
    (tmp_path / "memory" / "a.md").write_text("a\n")
    gitops.commit_paths(
        repo,
        ["a.md"],
        f"dreamtui: remember {STRIPE}",
        {"Dreamtui-Candidate": "c1"},
        body=f"the password is {PLANTED['password-in-prose']}",
    )
    log = repo.git.log("--format=%B")
    assert STRIPE not in log and PLANTED["password-in-prose"] not in log
    assert "[REDACTED:stripe-key]" in log and "Dreamtui-Candidate: c1" in log


def test_the_ledger_stores_no_secret_whichever_statement_writes_it(tmp_path: Path) -> None:
    from dreamtui.core.ledger import Ledger

    ledger = Ledger.open(tmp_path)
    try:
        with ledger.write() as c:
            c.execute("INSERT INTO meta(key, value) VALUES (?, ?)", ("plain", f"key {STRIPE}"))
            c.executemany(
                "INSERT INTO meta(key, value) VALUES (:k, :v)",
                [{"k": "many", "v": f"npm {PLANTED['npm-token']}"}],
            )
            c.cursor().execute(
                "INSERT INTO meta(key, value) VALUES (?, ?)",
                ("json", json.dumps({"error": f"pw={PLANTED['password-in-prose']}", "n": 1})),
            )
        rows = {r["key"]: r["value"] for r in ledger.query("SELECT * FROM meta")}
        assert rows["plain"] == "key [REDACTED:stripe-key]"
        assert rows["many"] == "npm [REDACTED:npm-token]"
        assert json.loads(rows["json"]) == {"error": "pw=[REDACTED:generic-secret]", "n": 1}
        # a lookup with the text as it was given finds what was stored
        assert ledger.query("SELECT key FROM meta WHERE value = ?", (f"key {STRIPE}",))[0]["key"] == "plain"
    finally:
        ledger.close()
    assert STRIPE.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())


def test_a_failed_extractions_error_is_redacted_before_it_is_cut(tmp_path: Path) -> None:
    from dreamtui.core.ledger import Ledger, record_failed_extraction
    from dreamtui.core.models import Usage

    ledger = Ledger.open(tmp_path)
    try:
        error = "x" * 490 + " " + STRIPE  # the cut at 500 characters falls inside the key
        record_failed_extraction(
            ledger,
            session="s",
            project="p",
            path="/t/s.jsonl",
            start_offset=0,
            end_offset=9,
            content_hash="h",
            extractor="command",
            model=None,
            cycle_id=None,
            usage=Usage(),
            error=error,
            now=NOW,
        )
        stored = ledger.query("SELECT error FROM extractions")[0]["error"]
        assert STRIPE[:12] not in stored and stored.startswith("x" * 490)
    finally:
        ledger.close()


def test_the_waking_message_is_redacted() -> None:
    from dreamtui.core.dream.waking import waking_message
    from dreamtui.core.ledger.cycle_stats import CycleStats
    from dreamtui.core.ledger.cycles import CycleRecord

    record = CycleRecord(
        1,
        "*",
        "2026-03-10",
        "failed",
        NOW,
        error_message=f"REM: boom near {STRIPE}",
        stats=CycleStats(judge_error=f"the model said {PLANTED['google-api-key']}"),
    )
    text = waking_message(record)
    assert STRIPE not in text and PLANTED["google-api-key"] not in text
    assert "[REDACTED:stripe-key]" in text and "[REDACTED:google-api-key]" in text


def test_what_the_cli_prints_is_redacted() -> None:
    from dreamtui.cli.output import printable

    assert printable(f"claim: keep {STRIPE} out\x1b[31m") == "claim: keep [REDACTED:stripe-key] out\\x1b[31m"


def test_the_briefing_never_holds_a_secret_cut_short(tmp_path: Path, git_home: Path) -> None:
    from dreamtui.core.config import Config
    from dreamtui.core.ledger import Ledger
    from dreamtui.core.memory.briefing import ITEM_CHARS, SessionSource, build_briefing
    from dreamtui.core.models import Digest, Turn

    config = Config(
        transcripts=tmp_path / "t",
        memory=tmp_path / "memory",
        state=tmp_path / "state",
        extractor="heuristic",
    )
    # a request whose long token the briefing's item limit cuts in the middle: cut, it is no longer
    # recognisable as a token, so only redacting the words before the briefing is made keeps it out
    payload = (
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiYWRtaW4iOnRydWUsImlhdCI6MTUxNjIzOTAyMn0" * 2
    )
    token = "eyJhbGciOiJIUzI1NiJ9." + payload + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    words = f"Please keep using the session token {token} on staging."
    assert len(words) > ITEM_CHARS and rules_found(words) == ["jwt"]
    digest = Digest("s1", PROJECT, ["/t/s1.jsonl"], [Turn("person", words, "/t/s1.jsonl", 1, kind="prompt")])
    ledger = Ledger.open(config.state)
    try:
        text, _items = build_briefing(config, ledger, [SessionSource(digest)])
    finally:
        ledger.close()
    assert "Please keep using the session token [REDACTED:jwt]" in text
    assert payload[:12] not in text
