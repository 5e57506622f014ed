#!/usr/bin/env python3
"""Rebuild published AI-coding-agent conversation EXPORTS (SpecStory markdown,
claude-conversation-extractor markdown, aider chat history, ...) into the
Claude Code transcript JSONL shape.  Every record is marked as rebuilt
("version": "rebuilt", "rebuiltFrom": ...).

Usage:  python3 rebuild_export.py sources.json      (writes projects/ + manifest-rebuilt.json)

sources.json: list of {"id","repo","commit","path","format","agent","license",
   "notes", and either "mirror" (git dir holding the commit) or "cache" (file with
   the source bytes, e.g. taken from the read-only index), optional "chunk" (aider:
   index of the "# aider chat started at" section), optional "max_bytes"}.
"""
import datetime as dt
import hashlib
import json
import os
import re
import subprocess
import sys
import uuid

EVAL = os.path.dirname(os.path.abspath(__file__))
STATE = {}  # per-source parser notes (e.g. why a source was cut early)
MAX_BYTES_DEFAULT = 150 * 1024
SYNTH_BASE = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)


# ---------------------------------------------------------------- helpers
def det_uuid4(*parts):
    h = bytearray(hashlib.sha256("\x1f".join(parts).encode()).digest()[:16])
    h[6] = (h[6] & 0x0F) | 0x40  # version 4
    h[8] = (h[8] & 0x3F) | 0x80  # RFC 4122 variant
    return str(uuid.UUID(bytes=bytes(h)))


def iso(t):
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


TS_RE = re.compile(r"(\d{4}-\d{2}-\d{2})[ T_](\d{2})[:-](\d{2})(?:[:-](\d{2})(\.\d+)?)?Z?")


def parse_ts(s):
    m = TS_RE.search(s or "")
    if not m:
        return None
    d, hh, mm, ss, frac = m.groups()
    t = dt.datetime.strptime(f"{d} {hh}:{mm}:{ss or '00'}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone.utc)
    if frac:
        t = t.replace(microsecond=int(float(frac) * 1e6))
    return t


def strip_blank_edges(s):
    """Remove leading/trailing blank lines only (export layout), never inner text."""
    lines = s.split("\n")
    while lines and lines[0].strip() == "":
        lines.pop(0)
    while lines and lines[-1].strip() == "":
        lines.pop()
    return "\n".join(lines)


def drop_trailing_sep(s):
    s = strip_blank_edges(s)
    lines = s.split("\n")
    while lines and (lines[-1].strip() == "---" or lines[-1].strip() == ""):
        lines.pop()
    return "\n".join(lines)


# Each parser returns a list of turns:
#   {"role": "user"|"assistant", "text": str, "ts": datetime|None}
#   {"role": "tool", "name": str, "output": str, "ts": ...}   (call + separately shown output)

# ---------------------------------------------------------------- SpecStory
SS_HDR = re.compile(r"^_\*\*(User|Assistant|Agent)\b(.*?)\*\*_[ \t]*$")
THINK_RE = re.compile(r"<think>.*?</think>", re.S)
TOOLUSE_RE = re.compile(r"<tool-use\b.*?</tool-use>", re.S)
# SpecStory v1 (Cursor) tool blocks: <details> ... <summary>Read file / Searched / Tool use ...</summary> ... </details>
DETAILS_RE = re.compile(r"<details>\s*<summary>(.*?)</summary>.*?</details>", re.S)
TOOL_SUMMARY_HINT = re.compile(
    r"(Tool use|Read file|Searched|Listed|Grep|Edit file|Deleted|MCP tool|Thought Process|Called|Result|"
    r"Run command|Terminal|Fetch|Web search|Codebase|Created|Edited|tool|file)", re.I)
TOOLUSE_OUT_RE = re.compile(
    r'<tool-use\b[^>]*?data-tool-name="(?P<name>[^"]*)"[^>]*>.*?</tool-use>'
    r'(?:[ \t]*\n(?P<fence>`{3,})[^\n]*\n(?P<out>.*?)\n(?P=fence)[ \t]*(?=\n|$))?', re.S)
FUNC_RE = re.compile(r"<(function_calls|function_results|fnr)>.*?</\1>", re.S)


def clean_specstory_assistant(body):
    body = THINK_RE.sub("", body)
    body = TOOLUSE_RE.sub("", body)
    body = FUNC_RE.sub("", body)
    body = DETAILS_RE.sub(lambda m: "" if TOOL_SUMMARY_HINT.search(m.group(1)) else m.group(0), body)
    body = re.sub(r"\n{3,}", "\n\n", body)  # collapse the holes left by removed blocks
    return drop_trailing_sep(body)


# SpecStory v1 (Cursor extension): within an assistant turn, tool activity appears as its own
# "---"-separated segment.
V1_TERM_RE = re.compile(r"^(?P<q>\\?`\\?`\\?`)bash\n(?P<cmd>.*?)\n(?P=q)[ \t]*(?:\n\s*\n(?P<q2>\\?`\\?`\\?`)[^\n]*\n(?P<out>.*?)\n(?P=q2)[ \t]*)?$", re.S)
V1_DROP_RE = re.compile(
    r"^(<think>|<details|<no message>|Read file:|Could not (find|resolve)|Cannot edit files|Cancelled\s*$|"
    r"Listed (directory|current directory)|Searched |Grep search|Deleted |Model provided|Error calling tool|"
    r"Tool use:|Tool call|Fetched |Editing |Called MCP|MCP tool|\\?`\\?`\\?`(diff|bash)?\s*$|\\?`\\?`\\?`diff)")


def is_single_fence(seg):
    """True if the segment is exactly one fenced block (an edit/command call shown without output)."""
    lines = seg.strip().split("\n")
    m = re.match(r"^(\\?`\\?`\\?`+)", lines[0]) if lines else None
    if not m or len(lines) < 2:
        return False
    fence = lines[0][: len(m.group(1))]
    for i in range(1, len(lines)):
        if lines[i].strip() == fence:
            return i == len(lines) - 1
    return False


def specstory_v1_assistant(body, ts):
    res = []
    for seg in re.split(r"\n---[ \t]*\n", "\n" + body + "\n"):
        seg = strip_blank_edges(seg)
        if not seg.strip():
            continue
        m = V1_TERM_RE.match(seg)
        if m:
            if m.group("out") is not None:  # terminal call shown with its output
                res.append({"role": "tool", "name": "run_terminal_cmd", "output": m.group("out"), "ts": ts})
            continue  # a call without output is left out
        if V1_DROP_RE.match(seg) or is_single_fence(seg):
            continue  # tool block whose call and output are not separable (or a call without output)
        seg = clean_specstory_assistant(seg)
        if seg.strip():
            res.append({"role": "assistant", "text": seg, "ts": ts})
    return res


def parse_specstory(text):
    v1 = "Generated by SpecStory, Markdown v2" not in text[:300] and "Claude Code Session" not in text[:600]
    # SpecStory v2 exports of Cursor-extension and VS Code sessions still put "---" between segments
    seg_split = "<!-- cursor Session" in text[:800] or "<!-- vscode Session" in text[:800]
    turns, cur = [], None
    depth = 0  # inside <tool-use> ... </tool-use>
    for line in text.split("\n"):
        m = SS_HDR.match(line)
        if m and depth > 0:
            # a turn header inside a tool block means the tool output itself contains an export
            # (e.g. the agent printed a SpecStory file): stop before the turn holding that block
            STATE["cut_reason"] = "nested export inside tool output"
            cur = None
            break
        if line.lstrip().startswith("<tool-use"):
            depth += 1
        if "</tool-use>" in line:
            depth = max(0, depth - line.count("</tool-use>"))
        if m:
            if cur:
                turns.append(cur)
            role = "user" if m.group(1) == "User" else "assistant"
            extra = m.group(2)
            cur = {"role": role, "lines": [], "ts": parse_ts(extra), "side": "sidechain" in extra}
            continue
        if cur is not None:
            cur["lines"].append(line)
    if cur:
        turns.append(cur)
    out = []
    for t in turns:
        if t["side"]:
            continue  # sub-agent (sidechain) traffic is not the person/agent conversation
        body = "\n".join(t["lines"])
        if t["role"] == "user":
            # Claude Code slash-command console output ("  ⎿  ...") is not the person's words
            body = "\n".join(l for l in body.split("\n") if not l.lstrip().startswith("⎿"))
            body = drop_trailing_sep(body)
            if body.strip():
                out.append({"role": "user", "text": body, "ts": t["ts"]})
            continue
        if v1:
            out.extend(specstory_v1_assistant(body, t["ts"]))
            continue
        # assistant: a <tool-use> block immediately followed by a fenced block is a call whose
        # output is shown separately -> tool_use + tool_result; other tool blocks mix call and
        # output inside <details> and are left out.
        def add_text(chunk):
            pieces = re.split(r"\n---[ \t]*\n", "\n" + chunk + "\n") if seg_split else [chunk]
            for piece in pieces:
                piece = clean_specstory_assistant(piece)
                if piece.strip():
                    out.append({"role": "assistant", "text": piece, "ts": t["ts"]})

        pos = 0
        for m in TOOLUSE_OUT_RE.finditer(body):
            add_text(body[pos:m.start()])
            if m.group("out") is not None:
                out.append({"role": "tool", "name": m.group("name"), "output": m.group("out"), "ts": t["ts"]})
            pos = m.end()
        add_text(body[pos:])
    return out


# ---------------------------------------------------------------- claude-conversation-extractor
CC_HDR = re.compile(r"^## (👤 User|🤖 Claude)[ \t]*$")


def parse_claude_conversation(text):
    turns, cur = [], None
    for line in text.split("\n"):
        m = CC_HDR.match(line)
        if m:
            if cur:
                turns.append(cur)
            cur = {"role": "user" if "User" in m.group(1) else "assistant", "lines": []}
            continue
        if cur is not None:
            cur["lines"].append(line)
    if cur:
        turns.append(cur)
    out = []
    for t in turns:
        body = drop_trailing_sep("\n".join(t["lines"]))
        if t["role"] == "assistant":
            # tool calls are exported without their results: leave them out
            i = body.find("🔧 Using tool:")
            if i >= 0:
                body = drop_trailing_sep(body[:i])
        if body.strip():
            out.append({"role": t["role"], "text": body, "ts": None})
    return out


# ---------------------------------------------------------------- "# Session Log" markdown (## User / ## Assistant)
SL_HDR = re.compile(r"^## (User|Assistant)[ \t]*$")
SL_TOOL_RE = re.compile(r"\*\*Tool call: `[^`]*`\*\*[ \t]*\n(?:\s*(?P<f>`{3,})[^\n]*\n.*?\n(?P=f)[ \t]*(?=\n|$))?", re.S)


def parse_session_log(text):
    turns, cur = [], None
    for line in text.split("\n"):
        m = SL_HDR.match(line)
        if m:
            if cur:
                turns.append(cur)
            cur = {"role": m.group(1).lower(), "lines": []}
            continue
        if cur is not None:
            cur["lines"].append(line)
    if cur:
        turns.append(cur)
    out = []
    for t in turns:
        body = "\n".join(t["lines"])
        if t["role"] == "assistant":
            body = SL_TOOL_RE.sub("", body)  # tool calls are logged without their results: left out
        body = strip_blank_edges(body)
        if body.strip():
            out.append({"role": t["role"], "text": body, "ts": None})
    return out


# ---------------------------------------------------------------- cctrace "Claude Code Session Export" markdown
CT_HDR = re.compile(r"^### (👤 User|🤖 Assistant\b.*)$")
CT_TS = re.compile(r"^\*\*\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\]\*\*\s*$")
CT_TOOL = re.compile(r"🔧 \*\*Tool Use: ([^*]+)\*\*")
CT_DETAILS = re.compile(r"<details>\s*<summary>💭.*?</details>", re.S)


def fenced_body(block):
    """Content between the first fence line and its matching closing fence (last fence line)."""
    lines = block.split("\n")
    idx = [i for i, l in enumerate(lines) if l.startswith("```")]
    if len(idx) < 2:
        return None
    return "\n".join(lines[idx[0] + 1: idx[-1]])


def parse_cctrace(text):
    turns, cur, pending_ts = [], None, None
    for line in text.split("\n"):
        mt = CT_TS.match(line)
        if mt:
            pending_ts = parse_ts(mt.group(1))
            continue
        m = CT_HDR.match(line)
        if m:
            if cur and sum(1 for l in cur["lines"] if l.startswith("```")) % 2 == 1:
                # a header while a fenced tool result is still open: it belongs to an export
                # printed inside that result; stop before the block holding it
                STATE["cut_reason"] = "nested export inside tool output"
                cur = None
                break
            if cur:
                turns.append(cur)
            cur = {"role": "user" if "User" in m.group(1) else "assistant", "lines": [], "ts": pending_ts}
            pending_ts = None
            continue
        if cur is not None:
            cur["lines"].append(line)
    if cur:
        turns.append(cur)
    out, pending = [], []
    for t in turns:
        body = drop_trailing_sep("\n".join(t["lines"]))
        if t["role"] == "user":
            if body.lstrip().startswith("📊 **Tool Result:**"):
                outp = fenced_body(body)
                if pending and outp is not None:
                    out.append({"role": "tool", "name": pending.pop(0), "output": outp, "ts": t["ts"]})
                continue  # a result without a shown call is left out
            if body.strip():
                out.append({"role": "user", "text": body, "ts": t["ts"]})
            continue
        body = CT_DETAILS.sub("", body)  # internal reasoning
        mt = CT_TOOL.search(body)
        if mt:
            pending.append(mt.group(1).strip())
            body = drop_trailing_sep(body[:mt.start()])
        body = strip_blank_edges(body)
        if body.strip():
            out.append({"role": "assistant", "text": body, "ts": t["ts"]})
    return out


# ---------------------------------------------------------------- aider .aider.chat.history.md
AIDER_START = re.compile(r"^# aider chat started at (.*)$")


def parse_aider(text, chunk):
    """One "# aider chat started at" section.  '#### ' lines are the person's input (aider appends
    two spaces to each for markdown line breaks; those are dropped), '> ' lines are aider's own
    console output (commands, token/cost reports, commit notes, confirmation prompts) and are left
    out, everything else is the model's reply."""
    sections, cur = [], None
    for line in text.split("\n"):
        m = AIDER_START.match(line)
        if m:
            cur = {"ts": parse_ts(m.group(1)), "lines": []}
            sections.append(cur)
            continue
        if cur is not None:
            cur["lines"].append(line)
    sec = sections[chunk]
    out, role, buf = [], None, []

    def flush():
        if role and buf:
            body = strip_blank_edges("\n".join(buf))
            if body.strip():
                out.append({"role": role, "text": body, "ts": None})

    for line in sec["lines"]:
        if line.startswith("####"):
            content = line[5:] if line.startswith("#### ") else line[4:]
            if content.endswith("  "):
                content = content[:-2]
            if re.search(r"\(Y\)es/\(N\)o", content):
                continue  # answer to an aider confirmation prompt, not a message
            if role != "user":
                flush(); role, buf = "user", []
            buf.append(content)
        elif line.startswith(">"):
            if role == "user":
                flush(); role, buf = None, []
            # console output inside or between replies is left out
        else:
            if role != "assistant":
                if role == "user" and line.strip() == "":
                    continue  # blank line closing the person's block
                flush(); role, buf = "assistant", []
            buf.append(line)
    flush()
    return out, sec["ts"]


# ---------------------------------------------------------------- build records
def build_records(turns, src, session_id, cwd, first_ts=None):
    recs = []
    have_times = any(t.get("ts") for t in turns)
    prev_uuid = None
    prev_t = None
    n_msg = 0
    n_tool = 0
    for i, t in enumerate(turns):
        ts = t.get("ts")
        if have_times or first_ts:
            if ts is None:
                ts = (prev_t + dt.timedelta(seconds=1)) if prev_t else (first_ts or SYNTH_BASE)
            elif prev_t and ts < prev_t:
                ts = prev_t
        else:
            ts = SYNTH_BASE + dt.timedelta(seconds=30 * i)
        prev_t = ts
        base = {
            "parentUuid": prev_uuid,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session_id,
            "version": "rebuilt",
            "gitBranch": "",
        }
        if t["role"] == "user":
            u = det_uuid4(session_id, str(len(recs)))
            r = dict(base, type="user", message={"role": "user", "content": t["text"]},
                     uuid=u, timestamp=iso(ts), rebuiltFrom=src)
            recs.append(("person", r)); prev_uuid = u
        elif t["role"] == "assistant":
            n_msg += 1
            u = det_uuid4(session_id, str(len(recs)))
            r = dict(base, type="assistant",
                     message={"id": f"msg_rebuilt_{n_msg}", "type": "message", "role": "assistant",
                              "model": "rebuilt", "content": [{"type": "text", "text": t["text"]}]},
                     uuid=u, timestamp=iso(ts), rebuiltFrom=src)
            recs.append(("assistant", r)); prev_uuid = u
        elif t["role"] == "tool":
            n_msg += 1; n_tool += 1
            tid = f"toolu_rebuilt_{n_tool}"
            u = det_uuid4(session_id, str(len(recs)))
            r = dict(base, type="assistant",
                     message={"id": f"msg_rebuilt_{n_msg}", "type": "message", "role": "assistant",
                              "model": "rebuilt",
                              "content": [{"type": "tool_use", "id": tid, "name": t.get("name") or "Tool", "input": {}}]},
                     uuid=u, timestamp=iso(ts), rebuiltFrom=src)
            recs.append(("tool_use", r)); prev_uuid = u
            u2 = det_uuid4(session_id, str(len(recs)))
            base2 = dict(base, parentUuid=u)
            r2 = dict(base2, type="user",
                      message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": t["output"]}]},
                      toolUseResult={}, uuid=u2, timestamp=iso(ts), rebuiltFrom=src)
            recs.append(("tool_result", r2)); prev_uuid = u2
    return recs


def dumps(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":"))


def serialize(recs, max_bytes):
    lines = [dumps(r) + "\n" for _, r in recs]
    total = sum(len(l.encode()) for l in lines)
    if total <= max_bytes:
        return "".join(lines), False, recs
    # cut before a person turn so that the kept part fits
    size, cut = 0, None
    for i, (kind, _) in enumerate(recs):
        if kind == "person" and i > 0 and size <= max_bytes:
            cut = i
        size += len(lines[i].encode())
        if size > max_bytes and cut is not None:
            break
    if cut is None:
        cut = 1
    return "".join(lines[:cut]), True, recs[:cut]


INTERRUPT_RE = re.compile(r"^\[Request interrupted by user.*\]$")
# user records that Claude Code writes on the person's behalf (command caveats, slash-command
# wrappers and expansions, ! shell echoes): kept verbatim, but not counted as person turns
NON_PERSON_RE = re.compile(r"^(\[Request interrupted by user.*\]$|<local-command-|<command-|<bash-|Caveat: The messages below|"
                           r"Base directory for this skill|This session is being continued from a previous)", re.S)


def source_bytes(s):
    if s.get("cache"):
        with open(os.path.join(EVAL, s["cache"]), "rb") as f:
            return f.read()
    return subprocess.run(["git", "-C", s["mirror"], "show", f"{s['commit']}:{s['path']}"],
                          check=True, capture_output=True).stdout


def main(cfg_path):
    with open(cfg_path) as f:
        sources = json.load(f)
    manifest, folders_used = [], {}
    for s in sources:
        STATE.clear()
        raw = source_bytes(s)
        text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
        first_ts = None
        if s["format"] == "specstory":
            turns = parse_specstory(text)
        elif s["format"] == "claude-conversation":
            turns = parse_claude_conversation(text)
        elif s["format"] == "cctrace":
            turns = parse_cctrace(text)
        elif s["format"] == "session-log":
            turns = parse_session_log(text)
        elif s["format"] == "aider":
            turns, first_ts = parse_aider(text, s.get("chunk", 0))
        else:
            raise SystemExit("unknown format " + s["format"])
        repo_name = s["repo"].split("/")[1]
        key = s["repo"]
        base_folder = "-rebuilt-" + re.sub(r"[^A-Za-z0-9]", "-", repo_name)
        n = folders_used.get(base_folder, 0) + 1
        folders_used[base_folder] = n
        folder = base_folder if n == 1 else f"{base_folder}-{n}"
        session_id = det_uuid4(s["repo"], s["path"], str(s.get("chunk", "")))
        src = f"{s['repo']}@{s['commit']}:{s['path']}"
        recs = build_records(turns, src, session_id, "/rebuilt/" + repo_name, first_ts)
        out, truncated, kept = serialize(recs, s.get("max_bytes", MAX_BYTES_DEFAULT))
        if STATE.get("cut_reason"):
            truncated = True
        os.makedirs(os.path.join(EVAL, "projects", folder), exist_ok=True)
        rel = os.path.join("projects", folder, session_id + ".jsonl")
        data = out.encode()
        with open(os.path.join(EVAL, rel), "wb") as f:
            f.write(data)
        person = sum(1 for k, r in kept if k == "person" and not NON_PERSON_RE.match(r["message"]["content"].strip()))
        entry = {
            "id": s["id"], "project_folder": folder, "session": session_id, "rebuilt": True,
            "files": [{
                "eval_path": rel, "repo": s["repo"], "commit": s["commit"], "source_path": s["path"],
                "license": s["license"], "source_sha256": hashlib.sha256(raw).hexdigest(),
                "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "truncated": truncated,
            }],
            "agent": s["agent"], "person_turns": person, "notes": s.get("notes", ""),
        }
        manifest.append(entry)
        print(f"{s['id']:4} {folder:50} person={person:3} recs={len(kept):4} bytes={len(data):7} trunc={truncated} {STATE.get('cut_reason', '')}")
    with open(os.path.join(EVAL, "manifest-rebuilt.json"), "w") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(EVAL, "sources.json"))
