"""Secret scanning: every format, in candidate text, frontmatter and JSON-escaped transcript text.

Fake credentials are assembled at run time so this file never holds one in clear.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import time

import pytest

from dreamtui.core.secrets import RULE_NAMES, has_secret, redact, rules_found, scan

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)

SECRETS: dict[str, str] = {
    "aws-access-key": "AKIA" + "Q3EGRT7ZKLPX2M4N",
    "github-token": "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
    "github-pat": "github_pat_" + "11ABCDEFG0" + "123456789_aBcDeFgHiJkLmNoPqRsTuV",
    "slack-token": "xoxb-" + "2945817360-5539011428-Zq8TkLm3VbN2xW",
    "slack-webhook": "https://hooks.slack.com/services/" + "T024BE7LD/B01HNB5V9QE/Xk2mP9qLr7TzW3vN8sYb4Jf6",
    "anthropic-key": "sk-ant-api03-" + "Xk2mP9qLr7TzW3vN8sYb4Jf6Hg1Dc5Ae0Ru-_Qw9Ty8Ui7Op6",
    "openai-key": "sk-" + "T3BlbkFJ" + "q8Lm2Zx7Vb4Nc1Qw9Er6Ty3Ui5Op0As",
    "openai-proj-key": "sk-proj-" + "Xk2mP9qLr7TzW3vN8sYb4Jf6Hg1Dc5Ae0Ru",
    "private-key": PEM,
    "url-credentials": "postgres://app:" + "Zx81kLm2Qp" + "@db.internal:5432/billing",
    "jwt": "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "stripe-key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "stripe-restricted-key": "rk_live_" + "51H8aBcDeFgHiJkLmNoPq7Xz",
    "google-api-key": "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "npm-token": "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "gitlab-token": "glpat-" + "xY7zK2mP9qLr3TvW8nBc",
    "bearer-token": "Bearer " + "q8Lm2Zx7Vb4Nc1Qw9Er6Ty3U",
    "password-in-prose": "the password is " + "hunter2-Xy9!",
    "pw-assignment": "pw=" + "hunter2-Xy9!",
}
EXPECTED_RULE = {
    "github-pat": "github-token",
    "openai-proj-key": "openai-key",
    "stripe-restricted-key": "stripe-key",
    "pw-assignment": "generic-secret",
}


def rule_of(name: str) -> str:
    return EXPECTED_RULE.get(name, name)


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_format_in_candidate_text(name: str) -> None:
    secret = SECRETS[name]
    text = f"Set the client up with {secret} and then run the deploy script."
    assert rules_found(text) == [rule_of(name)]
    red = redact(text)
    assert secret not in red
    assert f"[REDACTED:{rule_of(name)}]" in red
    assert red.startswith("Set the client up with ") and red.endswith(" and then run the deploy script.")


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_format_in_frontmatter(name: str) -> None:
    secret = SECRETS[name].replace("\n", "\n  ")
    text = f"---\nname: deploy credentials\ndescription: how to deploy\nkey: |\n  {secret}\n---\nBody.\n"
    assert rule_of(name) in rules_found(text)
    red = redact(text)
    for part in SECRETS[name].splitlines():
        if len(part) >= 20:
            assert part not in red
    assert red.startswith("---\nname: deploy credentials\n") and red.endswith("---\nBody.\n")


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_format_in_json_escaped_transcript_text(name: str) -> None:
    secret = SECRETS[name]
    record = {"type": "user", "message": {"role": "user", "content": f'config:\n"key": "{secret}"\n'}}
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    assert rule_of(name) in rules_found(line)
    red = redact(line)
    for part in secret.split("\n"):
        if len(part) > 20:
            assert part not in red
    if name != "private-key":
        assert json.loads(red)  # redaction keeps the JSON line parseable


def test_secret_after_a_json_newline_escape_is_found() -> None:
    text = json.dumps("first line\n" + SECRETS["aws-access-key"])
    assert "\\nAKIA" in text
    assert rules_found(text) == ["aws-access-key"]


def test_private_key_split_by_newline_escapes_is_redacted_whole() -> None:
    text = json.dumps({"content": "here is the key:\n" + PEM + "\nthanks"})
    red = redact(text)
    assert "MIIEow" not in red and "VTLw7o" not in red and "END RSA" not in red
    assert "[REDACTED:private-key]" in red and "thanks" in red


def test_private_key_without_end_marker_still_redacts_the_body() -> None:
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n(truncated)"
    red = redact(text)
    assert "b3BlbnNz" not in red and "(truncated)" in red


@pytest.mark.parametrize(
    "text",
    [
        "password=Tr0ub4dor93xyz",
        'DB_PASSWORD: "s3cr3tP@ssw0rd!"',
        "export GITHUB_TOKEN=Zk29fQx81LmNvB0aTq",
        "api_key = 'a8F3kL0qZ7xV2mN9'",
        "client_secret => 9f8e7d6c5b4a3f2e1d0c",
        '\\"token\\": \\"Zk29fQx81LmNvB0aTq\\"',
    ],
)
def test_generic_assignment_with_random_value_is_flagged(text: str) -> None:
    findings = scan(text)
    assert [f.rule for f in findings] == ["generic-secret"]
    # only the value is redacted, the key name stays readable
    assert (
        redact(text)
        .split("[REDACTED")[0]
        .lower()
        .rstrip("\\\"' =:>")
        .endswith(("password", "token", "key", "secret"))
    )


@pytest.mark.parametrize(
    "text",
    [
        "the password is hunter2-Xy9!",
        "The password is Tr0ub4dor&3.",
        "the password for the staging db is 'Kx8#mP2qL'",
        "so the passphrase is now: Blue7Horse9x",
        "pw is Kx8mP2qLzz9",
        'PASSWORD WAS \\"hunter2-Xy9!\\"',
    ],
)
def test_a_password_written_in_prose_is_flagged(text: str) -> None:
    assert [f.rule for f in scan(text)] == ["password-in-prose"]
    assert "[REDACTED:password-in-prose]" in redact(text)
    assert not any(secret in redact(text) for secret in ("hunter2-Xy9", "Tr0ub4dor", "Kx8", "Blue7Horse9x"))


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in the vault",
        "the password is required",
        "the password is case-sensitive",
        "reset the password via the admin panel",
        "password: see 1Password",
        "the password is at least 12 characters",
        "the password is hashed with bcrypt",
        "the password is `$DB_PASSWORD`",
        "the password field is empty",
        "passwords must be 12+ characters long",
        "the password was rotated yesterday",
        "the password is your-password-here",
        "the password for prod is in 1Password under Staging",
        "the password is SHA-256 hashed",
        "the password is /run/secrets/db",
        "The password is changed every 90 days",
        "the password is now expired-and-reset",
        "the pw is wrong",
    ],
)
def test_ordinary_prose_about_passwords_is_not_flagged(text: str) -> None:
    assert scan(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "Bearer tokens go in the Authorization header",
        "use a bearer token-based-authentication-scheme",
        "Authorization: Bearer <token>",
        "Authorization: Bearer ${API_TOKEN}",
        "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE",
        "sk_live_ keys are secret, rk_live_ keys are restricted",
        "an npm_modules folder and a glpat- prefix",
        "the AIza prefix marks a Google key",
    ],
)
def test_format_prefixes_in_prose_are_not_flagged(text: str) -> None:
    assert scan(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "password=changeme",
        "password: hunter2",
        "token=${GITHUB_TOKEN}",
        "api_key = os.environ['API_KEY']",
        "password=<your-password-here>",
        "secret: xxxxxxxxxxxxxxxx",
        "token: the number of tokens is manageable",
        "password=self.password",
        "the token budget is 100000 tokens per minute",
        "a task-management-system-with-a-long-name",
        "use scikit-learn and sk-learn-compatible estimators",
        "redis://:${REDIS_PASSWORD}@cache:6379/0",
        "git clone git@github.com:org/repo.git",
        "open https://user:password@example.com/docs",
    ],
)
def test_placeholders_and_prose_are_not_flagged(text: str) -> None:
    assert scan(text) == []
    assert redact(text) == text


def test_allow_list_comments_do_not_switch_scanning_off() -> None:
    secret = SECRETS["github-token"]
    for comment in ("# gitleaks:allow", "# pragma: allowlist secret", "// nosec", "# noqa"):
        text = f'TOKEN = "{secret}"  {comment}'
        assert has_secret(text), comment
        assert secret not in redact(text)


def test_findings_never_carry_the_secret() -> None:
    text = "one " + SECRETS["anthropic-key"] + " two " + SECRETS["aws-access-key"]
    findings = scan(text)
    assert [f.rule for f in findings] == ["anthropic-key", "aws-access-key"]
    for f in findings:
        assert {fl.name for fl in dataclasses.fields(f)} == {"rule", "start", "end"}
        assert text[f.start : f.end] in (SECRETS["anthropic-key"], SECRETS["aws-access-key"])
    assert all(r in RULE_NAMES for r in rules_found(text))


def test_redact_is_idempotent_and_leaves_clean_text_alone() -> None:
    text = "run `uv run pytest -q` before committing; never push to main"
    assert redact(text) == text
    dirty = "key " + SECRETS["openai-proj-key"]
    assert redact(redact(dirty)) == redact(dirty)


@pytest.mark.parametrize(
    "chunk",
    [
        "eyJ",  # JWT prefix repeated: no catastrophic backtracking
        "password=aB3",  # generic keyword repeated with values
        "-----BEGIN RSA PRIVATE KEY-----x",
        "AKIA",
        "a://b:",  # URL scheme and user repeated
        "Bearer ",  # header keyword repeated
        "the password for a ",  # prose password with its qualifier repeated
        "password is ",
        "AIza",
        "sk_live_",
    ],
)
def test_ten_megabyte_line_finishes_in_bounded_time(chunk: str) -> None:
    line = chunk * (10_000_000 // len(chunk))
    # CPU time, not wall time: a loaded machine (other test workers) stretches the wall clock, while
    # catastrophic backtracking over 10 MB would take hours of CPU, far past any bound here
    start = time.process_time()
    scan(line)
    assert time.process_time() - start < 8.0


def test_ten_megabyte_line_with_a_secret_at_the_end_is_found() -> None:
    line = "x" * 10_000_000 + " " + SECRETS["github-token"]
    start = time.process_time()
    assert rules_found(line) == ["github-token"]
    assert time.process_time() - start < 8.0


# -- formats and evasions an adversarial run found unredacted (issue 23 item 2) -------------------


def fullwidth(text: str) -> str:
    """``text`` in fullwidth forms (U+FF01…U+FF5E), as a person or a model might paste it."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


AZURE_KEY = base64.b64encode(random.Random(23).randbytes(64)).decode()
GH = "ghp_" + "Hq8Lm2Zx7Vb4Nc1Qw9Er6Ty3Ui5Op0AsXk2m"
# (what a person wrote, the secret in it, the rule that must name it)
ATTACKS: dict[str, tuple[str, str, str]] = {
    "aws secret key in prose": (
        "I set the CLI up with secret {s} and region eu-west-1.",
        "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY",
        "aws-secret-key",
    ),
    "aws secret key in an ini file": (
        "[default]\naws_secret_access_key = {s}\n",
        "Zq8TkLm3VbN2xW" + "/u9Rt5Ye1Wq7Op3As6Df0Gh4Jk8L",
        "generic-secret",  # the key = value rule finds it first
    ),
    "hugging face token": (
        "run huggingface-cli login --token {s} first",
        "hf_" + "jCBaQngSHiHDRYOcsMcifUcysGyaiybUWz",
        "huggingface-access-token",
    ),
    "azure storage connection string": (
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
        AZURE_KEY,
        "azure-storage-key",
    ),
    "azure storage key in prose": (
        "the azure storage key is {s} until Friday",
        AZURE_KEY,
        "azure-storage-key",
    ),
    "sendgrid key": (
        "mail goes out with {s} on prod",
        "SG." + "aB3dE6gH9jK2mN5pQ8sT1v" + "." + "W4yZ7bC0eF3hJ6aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC",
        "sendgrid-api-token",
    ),
    "twilio api key": (
        "the Twilio key {s} sends the SMS",
        "SK" + "3f9a0c1d2e4b5a6978877665544332a1",
        "twilio-api-key",
    ),
    "authorization bearer hex": (
        "curl -s -H 'authorization: bearer {s}' https://api.internal/v1/me",
        "3f9a0c1d2e4b5a69" + "78877665544332a1",
        "bearer-token",
    ),
    "lower-case bearer hex in a header dump": (
        "authorization: bearer {s}",
        "9e107d9d372bb682" + "6bd81d3542a419d6",
        "bearer-token",
    ),
    "the pass is X": ("ok so the pass is {s} for the vpn", "Kx8mP2qL" + "zz9", "password-in-prose"),
    "token split by a zero-width space": (
        "push with {s} from CI",
        GH[:20] + "\u200b" + GH[20:],
        "github-token",
    ),
    "token split by a soft hyphen and a word joiner": (
        "push with {s} from CI",
        GH[:9] + "\u00ad" + GH[9:30] + "\u2060" + GH[30:],
        "github-token",
    ),
    "token in fullwidth letters": ("push with {s} from CI", fullwidth(GH), "github-token"),
    "aws key in fullwidth letters": (
        "key {s} here",
        fullwidth("AKIA" + "Q3EGRT7ZKLPX2M4N"),
        "aws-access-key",
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_format_is_redacted_and_only_its_own_span_is_cut(name: str) -> None:
    template, secret, rule = ATTACKS[name]
    text = template.format(s=secret)
    assert rule in rules_found(text)
    red = redact(text)
    before, after = template.split("{s}")
    assert red.startswith(before) and red.endswith(after), red  # the original text around it is intact
    assert red[len(before) : len(red) - len(after)].startswith("[REDACTED:")
    for piece in {secret[i : i + 10] for i in range(0, len(secret) - 9, 5)}:
        assert piece not in red


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_format_is_redacted_in_json_escaped_transcript_text(name: str) -> None:
    template, secret, _ = ATTACKS[name]
    line = json.dumps({"type": "user", "message": {"content": template.format(s=secret)}}, ensure_ascii=False)
    red = redact(line)
    assert json.loads(red)
    assert secret not in red and secret[-12:] not in red


def test_a_zero_width_escape_in_raw_json_is_read_through() -> None:
    line = json.dumps({"content": "push with " + GH[:20] + "\u200b" + GH[20:]})  # ensure_ascii: \\u200b
    assert "\\u200b" in line
    red = redact(line)
    assert GH[:20] not in red and GH[20:] not in red and json.loads(red)


def test_normalised_text_maps_back_to_the_original_offsets() -> None:
    text = "ｘ " + fullwidth("AKIA" + "Q3EGRT7ZKLPX2M4N") + " y\u200bz " + GH[:5] + "\u200b" + GH[5:] + " end"
    findings = scan(text)
    assert [f.rule for f in findings] == ["aws-access-key", "github-token"]
    assert text[findings[0].start : findings[0].end] == fullwidth("AKIA" + "Q3EGRT7ZKLPX2M4N")
    assert text[findings[1].start : findings[1].end] == GH[:5] + "\u200b" + GH[5:]
    assert redact(text) == "ｘ [REDACTED:aws-access-key] y\u200bz [REDACTED:github-token] end"


@pytest.mark.parametrize(
    "text",
    [
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the secret rotation",
        "git show 9fceb02d0ae598e95dc970b74767f19372d61af8 -- aws/config",
        "the secret's sha1 is 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
        '"sessionId": "5f8e2a1c-3b4d-4e6f-9a0b-1c2d3e4f5a6b", "token": "used"',
        "aws s3 cp s3://bucket/releases/2026/ReleaseNotesAndChangelog.txt .",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 secret layer",
        '"integrity": "sha512-'
        + base64.b64encode(random.Random(5).randbytes(64)).decode()
        + '" (azure pipeline cache)',
        "the pass is complete",
        "the pass is case-sensitive",
        "src/components/Secret/AwsCredentialsProvider/IndexPage.tsx",
    ],
)
def test_hashes_ids_and_paths_near_secret_words_are_not_flagged(text: str) -> None:
    assert scan(text) == []


@pytest.mark.parametrize(
    "text",
    [  # the shapes that follow "key", "token", "secret" in real sessions (docs/gate.md)
        "gpg --edit-key BF272C9251706E4A3B0CE36712740A31E8F40B96",
        "gpg:                using RSA key 3FEF9748469ADBE15DA7CA80AC2D62742012EA22",
        "gpg --armor --export-secret-keys 8E1F899571345D06",
        "language_server --csrf_token b3f36bfa-60d7-472c-baa8-44eb053c8bd3",
        '"Value"="34a02cf8f4414e29b15921876da36f9a",Key="daafbccc737745039dffe53d94fc76cf"',
        "gpg --list-secret-keys --keyid-format=long",
        "Set Actions secret GEMINI_API_KEY for M-Thisness/M-Gemini",
        "the client ID comes from the Actions secret VITE_YNAB_CLIENT_ID",
        "the default key claude-3-5-sonnet-20241022 in the config",
        "the api key is gpt-4o-mini-2024-07-18 scoped",
        "the token test_session_manager_v2_fixture is reused",
        "the password is correcthorsebatterystaple",
        "the token is YOUR_GITHUB_TOKEN_HERE_1234",
    ],
)
def test_hashes_names_and_options_after_key_words_in_prose_are_not_flagged(text: str) -> None:
    assert scan(text) == []
