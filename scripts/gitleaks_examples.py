"""Extract gitleaks' own test strings (each rule's true and false positives) into a test data file.

Every rule in gitleaks' ``cmd/generate/config/rules/*.go`` is validated there against example
strings: ``tps`` (must be found) and ``fps`` (must not). This reads those Go files from a gitleaks
git directory and evaluates the small part of Go they use: string literals, ``+``, ``[]string{…}``,
``append``, ``utils.GenerateSampleSecret(s)`` (its templates, ported below), ``secrets.NewSecret(re)``
(a random string matching ``re``, seeded so the output is the same every run), the ``utils`` regex
helpers, ``fmt.Sprintf`` with ``%s``, ``strings.Repeat`` and local string variables. An example
using anything else is left out and counted.

    python scripts/gitleaks_examples.py /path/to/gitleaks/.git [--commit SHA] \\
        --out tests/data/gitleaks_examples.json

The strings are written base64-encoded: they are fake credentials made to look real, and this
repository never holds one in clear (no scanner or push protection trips on its own tests).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import re._parser as sre_parse  # type: ignore[import-not-found]
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

# utils.GenerateSampleSecrets' templates ({i}: identifier, {I}: upper-cased, {s}: secret)
SAMPLES = [
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    '{i}Token = "{s}"',
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"',
    '{i}_TOKEN := "{s}"',
    '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"',
    '{i}_TOKEN ?= "{s}"',
]
HELPERS = {
    "utils.Numeric": "[0-9]{%s}",
    "utils.Hex": "[a-f0-9]{%s}",
    "utils.AlphaNumeric": "[a-z0-9]{%s}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
    "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
}
RNG = random.Random(20260722)


@dataclass(frozen=True)
class Sample:
    """``utils.GenerateSampleSecrets(identifier, secret)``: one example per template."""

    identifier: str
    secret: str


class Unsupported(Exception):
    """Go this evaluator does not read."""


# --- random strings from a regex (sre's parse tree) ---------------------------------------------
_CATEGORY = {
    "CATEGORY_DIGIT": "0123456789",
    "CATEGORY_WORD": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "CATEGORY_SPACE": " ",
}


def _class_chars(items: list[Any]) -> str:
    chars: list[str] = []
    negate = False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.append(chr(av))
        elif name == "RANGE":
            chars.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif name == "CATEGORY":
            chars.extend(_CATEGORY.get(str(av), ""))
        else:
            raise Unsupported(name)
    if negate:
        pool = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        chars = [c for c in pool if c not in set(chars)]
    if not chars:
        raise Unsupported("empty class")
    return "".join(chars)


def _gen(tree: Any) -> str:
    out: list[str] = []
    for op, av in tree:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "IN":
            out.append(RNG.choice(_class_chars(av)))
        elif name == "ANY":
            out.append(RNG.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            hi = lo + 8 if hi > 10_000 else hi
            out.extend(_gen(sub) for _ in range(RNG.randint(lo, hi)))
        elif name == "SUBPATTERN":
            out.append(_gen(av[-1]))
        elif name == "BRANCH":
            out.append(_gen(RNG.choice(av[1])))
        elif name == "CATEGORY":
            out.append(RNG.choice(_CATEGORY.get(str(av), "a")))
        elif name == "AT":
            continue
        else:
            raise Unsupported(name)
    return "".join(out)


def new_secret(regex: str) -> str:
    """A random string matching ``regex`` (gitleaks' ``secrets.NewSecret``)."""
    try:
        return _gen(sre_parse.parse(regex.replace("(?i)", "")))
    except (re.error, Unsupported, ValueError, TypeError) as exc:
        raise Unsupported(f"regex {regex!r}: {exc}") from exc


# --- a tiny Go expression reader ----------------------------------------------------------------
_TOKEN = re.compile(
    r"""\s*(?:(?P<comment>//[^\n]*)|(?P<raw>`[^`]*`)|(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<num>\d+)|(?P<name>[A-Za-z_][\w.]*)|(?P<op>\.\.\.|[-+(){}\[\],:=]))"""
)


def _go_string(lit: str) -> str:
    if lit.startswith("`"):
        return lit[1:-1]
    return json.loads(lit) if "\\x" not in lit else lit[1:-1].encode().decode("unicode_escape")


def tokens(src: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            if src[pos:].strip() == "":
                break
            raise Unsupported(f"token at {src[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        if kind != "comment":
            out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class Reader:
    def __init__(self, toks: list[tuple[str, str]], env: dict[str, Any]) -> None:
        self.toks, self.i, self.env = toks, 0, env

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self, want: str | None = None) -> tuple[str, str]:
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise Unsupported(f"expected {want}, got {tok[1]}")
        self.i += 1
        return tok

    def expr(self) -> Any:
        value = self.term()
        while self.peek() == "+":
            self.take()
            right = self.term()
            if not isinstance(value, str) or not isinstance(right, str):
                raise Unsupported("+ on a non-string")
            value += right
        return value

    def args(self) -> list[Any]:
        self.take("(")
        out: list[Any] = []
        while self.peek() != ")":
            value = self.expr()
            if self.peek() == "...":
                self.take()
                out.extend(value)
            else:
                out.append(value)
            if self.peek() == ",":
                self.take()
        self.take(")")
        return out

    def term(self) -> Any:
        kind, text = self.take()
        if kind in ("raw", "str"):
            return _go_string(text)
        if text == "[":
            self.take("]")
            self.take()  # string
            self.take("{")
            items: list[Any] = []
            while self.peek() != "}":
                try:
                    items.append(self.expr())
                except Unsupported:
                    items.append(Unsupported)
                    depth = 0  # skip to the next item
                    while not (depth == 0 and self.peek() in (",", "}")):
                        t = self.take()[1]
                        depth += t in "({[" and 1 or 0
                        depth -= t in ")}]" and 1 or 0
                if self.peek() == ",":
                    self.take()
            self.take("}")
            return items
        if kind == "name":
            if self.peek() != "(":
                if text in self.env:
                    return self.env[text]
                raise Unsupported(f"name {text}")
            args = self.args()
            if text == "append":
                return list(args[0]) + args[1:]
            if text == "utils.GenerateSampleSecrets":
                return [Sample(args[0], args[1])]  # expanded by the test, from the templates
            if text == "utils.GenerateSampleSecret":
                return f'{args[0]}_api_token = "{args[1]}"'
            if text == "secrets.NewSecret":
                return new_secret(args[0])
            if text in HELPERS:
                return HELPERS[text] % args[0]
            if text == "utils.Hex8_4_4_4_12":
                return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
            if text == "fmt.Sprintf" and all(isinstance(a, str) for a in args):
                if re.search(r"%[^s%]", args[0]):
                    raise Unsupported("Sprintf verb")
                return args[0] % tuple(args[1:])
            if text == "strings.Repeat":
                return args[0] * int(args[1])
            raise Unsupported(f"call {text}")
        if kind == "num":
            return int(text)
        raise Unsupported(f"term {text}")


_FUNC = re.compile(r"^func (\w+)\(\)[^{\n]*\{\n(.*?)^\}$", re.S | re.M)
_STMT = re.compile(r"^\t(\w+)\s*:?=\s*", re.M)


def _statement_end(body: str, start: int) -> int:
    """Where the Go statement starting at ``start`` ends (a newline at bracket depth 0)."""
    depth, i = 0, start
    while i < len(body):
        c = body[i]
        if body.startswith("//", i):
            i = body.find("\n", i)
            if i < 0:
                return len(body)
            if depth == 0:
                return i
        elif c == "'":
            m = re.compile(r"'(?:[^'\\\n]|\\.)*'").match(body, i)
            i = m.end() - 1 if m else i
        elif c == "`":
            i = body.index("`", i + 1)
        elif c == '"':
            m = re.compile(r'"(?:[^"\\\n]|\\.)*"').match(body, i)
            i = m.end() - 1 if m else i
        elif c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == "\n" and depth == 0:
            return i
        i += 1
    return i


def examples(source: str) -> dict[str, dict[str, list[str] | int]]:
    """Per rule id: ``tp`` and ``fp`` strings, and how many were left out."""
    out: dict[str, dict[str, Any]] = {}
    for fn in _FUNC.finditer(source):
        body = fn.group(2)
        rid = re.search(r'RuleID:\s*"([^"]+)"', body)
        if not rid:
            continue
        env: dict[str, Any] = {"tps": [], "fps": []}
        left_out = 0
        for st in _STMT.finditer(body):
            name = st.group(1)
            end = _statement_end(body, st.end())
            try:
                value = Reader(tokens(body[st.end() : end]), env).expr()
            except (Unsupported, IndexError, KeyError, ValueError) as exc:
                if name in ("tps", "fps"):
                    left_out += 1
                    print(f"  {rid.group(1)}: left out a {name} statement ({exc})", file=sys.stderr)
                continue
            if name in ("tps", "fps") and isinstance(value, list):
                kept = [v for v in value if isinstance(v, str | Sample)]
                left_out += len(value) - len(kept)
                env[name] = kept
            elif isinstance(value, str | list):
                env[name] = value
        out[rid.group(1)] = {"tp": env["tps"], "fp": env["fps"], "left_out": left_out}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gitdir", help="a gitleaks git directory")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    git = ["git", "--git-dir", args.gitdir]
    commit = subprocess.run(git + ["rev-parse", args.commit], check=True, capture_output=True, text=True)
    sha = commit.stdout.strip()
    names = subprocess.run(
        git + ["ls-tree", "--name-only", sha, "cmd/generate/config/rules/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    rules: dict[str, Any] = {}
    for name in sorted(n for n in names if n.endswith(".go") and not n.endswith("_test.go")):
        src = subprocess.run(
            git + ["show", f"{sha}:{name}"], check=True, capture_output=True, text=True
        ).stdout
        rules.update(examples(src))

    def enc(s: str) -> str:
        return base64.b64encode(s.encode("utf-8")).decode("ascii")

    def entries(items: list[Any]) -> list[Any]:
        return [[enc(v.identifier), enc(v.secret)] if isinstance(v, Sample) else enc(v) for v in items]

    doc = {
        "source": {
            "repository": "https://github.com/gitleaks/gitleaks",
            "commit": sha,
            "files": "cmd/generate/config/rules/*.go",
            "licence": "MIT (see dreamtui/core/secret_rules/LICENSE.gitleaks)",
            "encoding": "each example is base64 of its UTF-8 text; a pair [identifier, secret] stands "
            "for utils.GenerateSampleSecrets(identifier, secret): one example per template in samples",
            "made_by": "scripts/gitleaks_examples.py",
        },
        "samples": SAMPLES,
        "rules": {
            rid: {"tp": entries(ex["tp"]), "fp": entries(ex["fp"]), "left_out": ex["left_out"]}
            for rid, ex in sorted(rules.items())
        },
    }
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=0, sort_keys=False)
        fh.write("\n")
    tps = sum(len(SAMPLES) if isinstance(t, list) else 1 for r in doc["rules"].values() for t in r["tp"])
    fps = sum(len(r["fp"]) for r in doc["rules"].values())
    lost = sum(r["left_out"] for r in doc["rules"].values())
    print(f"{len(rules)} rules, {tps} true and {fps} false examples, {lost} left out")


if __name__ == "__main__":
    main()
