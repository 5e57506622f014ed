"""Settings a person changes in the app (the ``[ui]`` table, declared in ``core.config``), written back
to their config file.

Only the keys changed are written, in the file's ``[ui]`` table: every other byte of the file stays as
the person wrote it (comments, order, spacing, other tables). A file this could not edit safely (not
UTF-8, not valid TOML before or after) is left alone and a :class:`ConfigError` says why.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

from dreamtui.core.config import check_ui
from dreamtui.core.errors import ConfigError

_HEADER = re.compile(rb"^\s*\[\s*([^\]\s]+)\s*\]\s*(#.*)?$")


def _toml_string(value: str) -> bytes:
    """``value`` as a TOML basic string (JSON's escapes are TOML's for these)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def updated_text(data: bytes, values: dict[str, str]) -> bytes:
    """``data`` (a config file's bytes) with ``values`` set in its ``[ui]`` table: a key's line
    replaced where it is, missing keys added at the end of the table, the table added at the end of
    the file when there is none; nothing else changes."""
    lines = data.splitlines(keepends=True)
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    start = end = None
    for n, line in enumerate(lines):
        header = _HEADER.match(line.rstrip(b"\r\n"))
        if header is not None:
            if start is not None and end is None:
                end = n
            if header.group(1) == b"ui":
                start = n
    if start is None:
        tail = b"" if not data or data.endswith(b"\n") else newline
        body = b"".join(k.encode() + b" = " + _toml_string(v) + newline for k, v in values.items())
        return data + tail + (newline if data.strip() else b"") + b"[ui]" + newline + body
    end = len(lines) if end is None else end
    left = dict(values)
    for n in range(start + 1, end):
        match = re.match(rb"^(\s*)([A-Za-z_]+)(\s*=\s*)", lines[n])
        if match and match.group(2).decode() in left:
            ending = newline if lines[n].endswith(b"\n") else b""
            key = match.group(2).decode()
            lines[n] = match.group(0) + _toml_string(left.pop(key)) + ending
    insert = end
    while insert > start + 1 and not lines[insert - 1].strip():
        insert -= 1  # after the table's last setting, before the blank lines that end it
    if insert > 0 and not lines[insert - 1].endswith(b"\n"):
        lines[insert - 1] += newline
    added = [k.encode() + b" = " + _toml_string(v) + newline for k, v in left.items()]
    lines[insert:insert] = added
    return b"".join(lines)


def save_ui(path: Path, values: dict[str, str]) -> None:
    """Write ``values`` into the ``[ui]`` table of the config file ``path`` (created if absent), keeping
    the rest byte for byte; atomically (a temporary file renamed over it)."""
    check_ui(values)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    try:
        tomllib.loads(data.decode("utf-8"))
        new = updated_text(data, values)
        written = tomllib.loads(new.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {path}: cannot save settings into it ({exc})") from None
    if {k: written.get("ui", {}).get(k) for k in values} != values:
        raise ConfigError(f"config file {path}: cannot save settings into it (its [ui] table is unusual)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(new)
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o7777)
    os.replace(tmp, path)
