#!/usr/bin/env python3
"""A turnjournal v1 reader in plain Python 3 (standard library only), speaking the
conformance kit's adapter protocol (spec §17.3) on stdin/stdout.

It is an example, written from spec/v1/spec.md, that proves a non-TypeScript
implementation can be checked by the conformance kit. Run it as an adapter:

    turnjournal conformance --adapter "python3 examples/python-adapter/adapter.py" --tier reader

or import it and call ``read_store(paths, mode, audit)``.

Record validation uses spec/v1/schema.json through a small JSON Schema validator
for the subset of keywords that schema uses (type, required, properties,
patternProperties, const, enum, minLength, minimum, items, anyOf, allOf, not,
if/then/else, local $ref). schema.json is found from --schema, else $TJ_SCHEMA, else
beside this file, else in the repository checkout around it.
"""

import errno
import json
import os
import re
import socket
import stat
import sys

NAME = "turnjournal-python-example"
VERSION = "0.1.0"
PROTOCOL = 1

LINE_LIMIT = 16 * 1024 * 1024  # TJ-FRAME-031
READ_LIMIT = [LINE_LIMIT]  # the reader's limit; `read` may lower it with max_line_bytes (adapter.md §4.2)
DOCUMENT_LIMIT = 64 * 1024 * 1024  # TJ-STATE-003
CHUNK = 1024 * 1024

# --- Defect switches (mutation matrix, scripts/mutation-matrix.ts) -----------------------------------------------
# TJ_MUTANT=<name> breaks exactly one requirement so that the conformance kit can show it catches the defect; unset,
# nothing changes. Every hook below is one `if MUTANT == ...` line at the place it breaks.
MUTANT = os.environ.get("TJ_MUTANT", "")
MUTANTS = ("pid-only-liveness", "no-dir-fsync", "no-fdatasync", "no-poison", "sorted-members", "accept-invalid",
           "unlink-any-lock", "no-close-fsync", "role-required", "no-seq-limit", "no-duplicate-run-start",
           "follow-symlink", "no-file-type-check", "no-line-limit", "banner-on-stdout", "string-ids",
           "exit-on-unknown-op", "no-levels-claim", "no-every-claim", "group-sync-every-4th", "submitted-unsynced",
           "swallow-write-error", "truncate-last-on-close",
           "no-bom-skip", "crlf-is-damage", "blank-is-damage", "nul-not-damage", "no-salvage", "damage-raises",
           "strict-reads-on", "prefix-reads-on", "oversized-as-malformed", "utf8-replace", "dup-member-first",
           "default-prefix", "torn-as-line", "type-case-insensitive", "no-mixed-families", "no-unknown-object",
           "bad-discriminator-ignored", "no-invalid-session-id", "no-session-mismatch", "reserved-scanned",
           "no-run-id-mismatch", "no-invalid-run-id", "reject-unknown-type", "extension-reported",
           "type-before-version", "reject-unknown-members", "no-dedupe", "no-orphan-finding", "interrupted-wins",
           "removed-turns-kept", "no-event-after-terminal", "first-shard-only",
           "no-seq-gap", "duplicate-as-regression", "regressed-seq-kept", "no-abandoned-run", "acks-ignored",
           "edit-out-of-range-appends", "checkpoint-ignored", "replay-no-ahead", "replay-no-compacted",
           "replay-inclusive", "no-record-after-run-end", "no-llm-seq-duplicate", "agent-gap-reported",
           "no-agent-regression", "no-unpaired-request", "no-unpaired-response", "no-missing-header",
           "no-interrupted-finding", "plan-ignores-locks", "no-pending-finding", "no-malformed-event-finding",
           "plan-no-user-message", "state-bom-rejected", "no-stale-state",
           "lax-turn-version", "lax-turn-id", "lax-submitted", "lax-interrupted", "lax-compacted",
           "lax-event-payload", "lax-stream-request-id", "lax-run-ts", "lax-header", "lax-run-end",
           "lax-event-ts", "lax-message-edit", "lax-run-id", "lax-run-start-input", "lax-agent-event",
           "lax-llm-request", "lax-llm-response", "extension-event-counts", "terminal-member-decides",
           "no-conflicting-duplicate", "strict-failure-no-line", "audit-repairs-tail",
           "kebab-codes", "findings-without-line",
           "unsafe-integers-written", "duplicate-member", "first-line-per-read", "strict-requests",
           "reader-follows-links", "reader-opens-fifo", "plan-takes-locks",
           "run-id-before-type",
           "schema-not-checked", "lax-state", "turn-id-identifier-only", "closed-reason-enum", "strict-timestamps",
           "last-event-wins", "shard-own-session", "state-line-silent", "mixed-records-kept",
           "family-from-name", "torn-zeros-zero-filled", "torn-is-damage", "salvage-head-too", "split-u2028",
           "no-strict-mode", "llm-seq-from-zero", "pair-by-order", "outcome-normalised", "no-end-means-cancelled",
           "ack-unknown-run-reported", "malformed-state-raises", "malformed-state-silent", "stop-exit-1",
           "no-durability-claim", "latin1-lines", "crlf-lines", "pretty-responses",
           "overlay-any-message-id", "checkpoint-closes-segment", "checkpoint-merges", "torn-checkpoint-used",
           "invalid-checkpoint-resets", "recursive-canonical",
           "session-from-records", "read-omits-event-logs", "records-kept",
           "lock-written-in-place", "single-write",
           "no-truncate-after-failure", "space-as-torn-tail",
           "split-checkpoint-ignored", "incomplete-parts-used", "compact-at-last-part",
           "checkpoint-always-split")
if MUTANT and MUTANT not in MUTANTS:
    sys.stderr.write("adapter.py: unknown TJ_MUTANT %r; one of %s\n" % (MUTANT, ", ".join(MUTANTS)))
    sys.exit(2)
BOM = b"\xef\xbb\xbf"
JSON_WS = b" \t\r\n"

# ---------------------------------------------------------------------------
# JSON Schema subset (spec/v1/schema.json)
# ---------------------------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))
# Where schema.json is looked for when neither --schema nor TJ_SCHEMA names it, in order: beside this file (a copy
# taken out of the repository), then the checkout around it.
SCHEMA_CANDIDATES = [
    os.path.join(_HERE, "schema.json"),
    os.path.normpath(os.path.join(_HERE, "..", "..", "spec", "v1", "schema.json")),
]
SCHEMA_PATH = None  # set by locate_schema()
_SCHEMA = None


class SchemaNotFound(Exception):
    pass


def locate_schema(explicit=None):
    """The schema.json to use: --schema, else $TJ_SCHEMA, else the first of SCHEMA_CANDIDATES that exists."""
    explicit = explicit or os.environ.get("TJ_SCHEMA")
    if explicit:
        if not os.path.isfile(explicit):
            raise SchemaNotFound("schema.json not found at %s (from %s)"
                                 % (explicit, "--schema" if explicit != os.environ.get("TJ_SCHEMA") else "TJ_SCHEMA"))
        return explicit
    for candidate in SCHEMA_CANDIDATES:
        if os.path.isfile(candidate):
            return candidate
    raise SchemaNotFound("cannot find schema.json: looked for %s; pass --schema <path> or set TJ_SCHEMA "
                         "(npm: node_modules/@turnjournal/schema/dist/v1/schema.json)" % " and ".join(SCHEMA_CANDIDATES))


def schema():
    global _SCHEMA, SCHEMA_PATH
    if _SCHEMA is None:
        if SCHEMA_PATH is None:
            SCHEMA_PATH = locate_schema()
        with open(SCHEMA_PATH, "rb") as f:
            _SCHEMA = json.loads(f.read().decode("utf-8"))
    return _SCHEMA


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_integer(v):
    # Spec §4.6: an integer is a number with no fractional part; 1.0 is the integer 1.
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and v == v and v not in (float("inf"), float("-inf")) and v.is_integer()


def _type_ok(v, t):
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    if t == "string":
        return isinstance(v, str)
    if t == "number":
        return is_number(v)
    if t == "integer":
        return is_integer(v)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    raise ValueError("unsupported schema type " + t)


def json_equal(a, b):
    """Equality of JSON values (spec §4.6): numbers by value, objects in any order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def valid(value, s):
    """True when ``value`` satisfies schema ``s`` (the subset schema.json uses)."""
    if s is True:
        return True
    if s is False:
        return False
    if "$ref" in s:
        ref = s["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError("unsupported $ref " + ref)
        if not valid(value, schema()["$defs"][ref[len("#/$defs/"):]]):
            return False
    t = s.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_type_ok(value, x) for x in types):
            return False
    if "const" in s and not json_equal(value, s["const"]):
        return False
    if "enum" in s and not any(json_equal(value, e) for e in s["enum"]):
        return False
    if isinstance(value, str) and "minLength" in s:
        # JSON Schema counts code points; JSON strings may hold lone surrogates, each one unit.
        if len(value) < s["minLength"]:
            return False
    if is_number(value) and "minimum" in s and value < s["minimum"]:
        return False
    if is_number(value) and "maximum" in s and value > s["maximum"] and MUTANT != "no-seq-limit":  # TJ-EVENT-018
        return False
    if isinstance(value, dict):
        for key in s.get("required", ()):
            if key not in value:
                return False
        for key, sub in s.get("properties", {}).items():
            if key in value and not valid(value[key], sub):
                return False
        for pattern, sub in s.get("patternProperties", {}).items():
            rx = re.compile(pattern)
            for key, v in value.items():
                if rx.search(key) and not valid(v, sub):
                    return False
    if isinstance(value, list) and "items" in s:
        if not all(valid(v, s["items"]) for v in value):
            return False
    if "allOf" in s and not all(valid(value, sub) for sub in s["allOf"]):
        return False
    if "anyOf" in s and not any(valid(value, sub) for sub in s["anyOf"]):
        return False
    if "oneOf" in s and sum(1 for sub in s["oneOf"] if valid(value, sub)) != 1:
        return False
    if "not" in s and valid(value, s["not"]):
        return False
    if "if" in s:
        if valid(value, s["if"]):
            if "then" in s and not valid(value, s["then"]):
                return False
        elif "else" in s and not valid(value, s["else"]):
            return False
    return True


_MEMBERS = []


def _schema_members():
    """Every member name schema.json defines anywhere (for the reject-unknown-members defect switch)."""
    if not _MEMBERS:
        found = set()
        stack = [schema()]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                found.update(node.get("properties", {}).keys())
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        _MEMBERS.append(found)
    return _MEMBERS[0]


def valid_def(value, name):
    return valid(value, {"$ref": "#/$defs/" + name})


# ---------------------------------------------------------------------------
# Families and record types (spec §4.1, §5-§8)
# ---------------------------------------------------------------------------

TURN_DEFS = {
    "submitted": "TurnSubmitted",
    "worker_started": "TurnWorkerStarted",
    "assistant_started": "TurnAssistantStarted",
    "completed": "TurnCompleted",
    "interrupted": "TurnInterrupted",
    "compacted": "TurnCompacted",
}
RUN_DEFS = {
    "header": "RunHeader",
    "run.start": "RunStart",
    "run.context": "RunContext",
    "agent.event": "RunAgentEvent",
    "tool.output": "RunToolOutput",
    "llm.request": "RunLlmRequest",
    "llm.response": "RunLlmResponse",
    "run.status": "RunStatus",
    "run.error": "RunError",
    "run.end": "RunEnd",
}
EVENT_DEFS = {
    "message_append": "EventMessageAppend",
    "message_edit": "EventMessageEdit",
    "undo": "EventUndo",
    "checkpoint": "EventCheckpoint",
    "checkpoint.part": "EventCheckpointPart",
    "chat.started": "EventChatStarted",
    "assistant.segment.started": "EventAssistantSegmentStarted",
    "chat.delta": "EventChatDelta",
    "tool.start": "EventToolStart",
    "tool.end": "EventToolEnd",
    "tool.result": "EventToolResult",
    "chat.done": "EventChatDone",
    "chat.error": "EventChatError",
    "chat.cancelled": "EventChatCancelled",
    "delivery.ack": "EventDeliveryAck",
}
ENVELOPES = {"turn": "TurnEnvelope", "event": "EventEnvelope", "run": "RunEnvelope"}
EXTENSION = re.compile(r"^x\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$")
IDENTIFIER = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
STREAM_TYPES = ("chat.started", "assistant.segment.started", "chat.delta", "tool.start", "tool.end", "tool.result",
                "chat.done", "chat.error", "chat.cancelled", "delivery.ack")
# Defect switches that accept a record missing one required member (each breaks the rule named beside it).
LAX = {
    "lax-turn-version": lambda fam, t, o: fam == "turn" and "version" not in o,  # TJ-TURN-001
    "lax-turn-id": lambda fam, t, o: fam == "turn" and t != "compacted" and "turn_id" not in o,  # TJ-TURN-002
    "lax-submitted": lambda fam, t, o: t == "submitted" and ("content" not in o or "session_id" not in o),  # TURN-007
    "lax-interrupted": lambda fam, t, o: t == "interrupted" and "reason" not in o,  # TJ-TURN-008
    "lax-compacted": lambda fam, t, o: t == "compacted" and "removed_turns" not in o,  # TJ-TURN-009
    "lax-event-payload": lambda fam, t, o: fam == "event" and t in EVENT_DEFS and t != "undo"
    and not isinstance(o.get("payload"), dict),  # TJ-EVENT-002
    "lax-stream-request-id": lambda fam, t, o: t in STREAM_TYPES and isinstance(o.get("payload"), dict)
    and "request_id" not in o["payload"],  # TJ-EVENT-008
    "lax-run-ts": lambda fam, t, o: fam == "run" and t != "header" and "ts" not in o,  # TJ-RUN-002
    "lax-header": lambda fam, t, o: t == "header" and ("schema_version" not in o or "started_at" not in o),  # RUN-006
    "lax-run-end": lambda fam, t, o: t == "run.end" and "outcome" not in o,  # TJ-RUN-011
    "lax-event-ts": lambda fam, t, o: fam == "event" and "ts" not in o,  # TJ-EVENT-001
    "lax-message-edit": lambda fam, t, o: t == "message_edit" and isinstance(o.get("payload"), dict)
    and "messages" not in o["payload"] and "message" not in o["payload"],  # TJ-EVENT-005
    "lax-run-id": lambda fam, t, o: fam == "run" and t != "header" and "run_id" not in o,  # TJ-RUN-001
    "lax-run-start-input": lambda fam, t, o: t == "run.start" and isinstance(o.get("input"), dict)
    and "type" not in o["input"],  # TJ-RUN-007
    "lax-agent-event": lambda fam, t, o: t == "agent.event" and isinstance(o.get("event"), dict)
    and "type" not in o["event"],  # TJ-RUN-008
    "lax-llm-request": lambda fam, t, o: t == "llm.request" and isinstance(o.get("input"), dict)
    and "messages" not in o["input"],  # TJ-RUN-009
    "lax-llm-response": lambda fam, t, o: t == "llm.response" and isinstance(o.get("output"), dict)
    and "messages" not in o["output"],  # TJ-RUN-010
}
RANK = {"submitted": 0, "worker_started": 1, "assistant_started": 2, "completed": 3, "interrupted": 3}
FINISHING = ("chat.done", "chat.error", "chat.cancelled")


def valid_identifier(s):
    """Spec §4.3. ``$`` in Python regexes matches before a final LF, so use fullmatch."""
    return isinstance(s, str) and IDENTIFIER.fullmatch(s) is not None and s not in (".", "..")


def classify(obj):
    """Spec §4.1: (family, type); family is turn|event|run|state|None|'bad' (rule 7)."""
    has_type = "type" in obj
    has_event = "event" in obj
    if not has_type and has_event and isinstance(obj["event"], str):
        return "turn", obj["event"].lower() if MUTANT == "type-case-insensitive" else obj["event"]  # TJ-FAM-003
    if not has_type and not has_event and "schema_version" in obj:
        return "state", None
    if has_type and isinstance(obj["type"], str):
        t = obj["type"].lower() if MUTANT == "type-case-insensitive" else obj["type"]  # switch: TJ-FAM-003
        if MUTANT == "run-id-before-type" and "run_id" not in obj and "seq" not in obj:
            return None, t  # defect switch: TJ-FAM-001 (rule 5's members asked before rules 3 and 4)
        if t in RUN_DEFS:
            return "run", t
        if t in EVENT_DEFS:
            return "event", t
        if "run_id" in obj:
            return "run", t
        if "seq" in obj:
            return "event", t
        return None, t
    if not has_type and not has_event:
        return None, None
    return "bad", None


# ---------------------------------------------------------------------------
# Findings
# ---------------------------------------------------------------------------


class StrictFailure(Exception):
    """Raised in strict mode at the first damaged line or invalid record (TJ-FRAME-022/023)."""

    def __init__(self, finding):
        super().__init__("%s in %s line %s at byte %s" % (
            finding["code"], finding.get("file"), finding.get("line"), finding.get("offset")))
        self.finding = finding


class Findings:
    def __init__(self):
        self.items = []

    def add(self, code, file=None, line=None, offset=None, turn_id=None, **extra):
        f = {"code": code.replace("_", "-") if MUTANT == "kebab-codes" else code}  # defect switch: TJ-AUDIT-001
        if file is not None:
            f["file"] = file
        if line is not None and MUTANT != "findings-without-line":  # defect switch: TJ-AUDIT-003
            f["line"] = line
        if offset is not None:
            f["offset"] = offset
        if turn_id is not None:
            f["turn_id"] = turn_id
        f.update(extra)
        self.items.append(f)
        return f


# ---------------------------------------------------------------------------
# Framing (spec §3)
# ---------------------------------------------------------------------------


def _parse_object(data):
    """bytes -> dict, or None when not valid UTF-8 / not JSON / not an object."""
    try:
        text = data.decode("utf-8", "replace" if MUTANT == "utf8-replace" else "strict")  # switch: TJ-FRAME-015
    except UnicodeDecodeError:
        return None
    try:
        value = json.loads(text, parse_constant=_reject_constant,  # defect switch below: TJ-FRAME-011
                           object_pairs_hook=(lambda pairs: dict(reversed(pairs))) if MUTANT == "dup-member-first" else None)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _reject_constant(name):
    raise ValueError("not JSON: " + name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
# An object that starts with {" starts with a member name and a colon: a cheap, exact filter of candidates (a failed
# parse is costly, because JSONDecodeError counts the lines before its position).
_MEMBER_START = re.compile(r'\{"(?:[^"\\\x00-\x1f]|\\.)*"[ \t\r\n]*:')


class _Line(str):
    """A line's text whose JSONDecodeError costs O(1): the error counts LFs before its position, and a line has none."""

    def count(self, *args):
        return 0

    def rfind(self, *args):
        return -1


def _salvage(data, start):
    """TJ-FRAME-025: the smallest p >= max(start, 1) where data[p:] starts with {" and parses as one JSON object.

    Returns (p, object) or (None, None). Each candidate suffix ends where the line ends, so a line whose end is not a
    closing brace has none; once one suffix decodes as UTF-8 every later candidate does too ({ is ASCII, so always at
    a character boundary), and the rest is searched in that decoded text without re-decoding.
    """
    if not data.rstrip(JSON_WS).endswith(b"}"):
        return None, None
    p = max(start, 1)
    while True:
        p = data.find(b'{"', p)
        if p < 0:
            return None, None
        try:
            text = data[p:].decode("utf-8")
            break
        except UnicodeDecodeError:
            p += 1
    text = _Line(text)
    i = 0
    while i >= 0:
        if not _MEMBER_START.match(text, i):
            i = text.find('{"', i + 1)
            continue
        try:
            value, end = _DECODER.raw_decode(text, i)
            if isinstance(value, dict) and text[end:].strip(" \t\r\n") == "":
                return p + len(text[:i].encode("utf-8", "surrogatepass")), value
        except (ValueError, RecursionError):
            pass
        i = text.find('{"', i + 1)
    return None, None


def iter_lines(path):
    """Yield (line_no, offset, bytes_or_None, length) for committed lines, then ('torn', offset, length).

    Streams the file in chunks; a line over LINE_LIMIT is yielded with bytes None and never buffered whole. The NUL
    bytes that end the file after its last LF, or after a torn tail, are pre-allocated space (TJ-FRAME-036): no line,
    and not part of the torn tail (TJ-FRAME-030). They are counted, not buffered, so a long run costs no memory.
    """
    line_no = 0
    offset = 0  # offset of the current line's first byte
    buf = bytearray()
    skipping = False  # current line is over the limit
    skipped = 0
    nuls = 0  # NUL bytes at the end of the current (partial) line
    with open(path, "rb") as f:
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            pos = 0
            while pos < len(chunk):
                nl = chunk.find(b"\n", pos)
                piece = chunk[pos:] if nl < 0 else chunk[pos:nl]
                if skipping:
                    skipped += len(piece)
                else:
                    buf += piece
                    if len(buf) > READ_LIMIT[0]:
                        skipping, skipped = True, len(buf)
                        buf = bytearray()
                if nl < 0:
                    trailing = len(piece) - len(piece.rstrip(b"\x00"))
                    nuls = nuls + trailing if trailing == len(piece) else trailing
                    break
                line_no += 1
                length = skipped if skipping else len(buf)
                yield ("line", line_no, offset, None if skipping else bytes(buf), length)
                offset += length + 1
                buf = bytearray()
                skipping, skipped, nuls = False, 0, 0
                pos = nl + 1
    rest = skipped if skipping else len(buf)
    if MUTANT != "space-as-torn-tail":  # defect switch: TJ-FRAME-036 (the space reported as a torn tail)
        rest -= nuls
    if rest > 0 and MUTANT == "torn-as-line" and not skipping:
        yield ("line", line_no + 1, offset, bytes(buf[:rest]), rest)  # defect switch: TJ-FRAME-003
    elif rest > 0:
        yield ("torn", offset, rest)


def writer_violations(path, findings):
    """What a writer must not write although readers cope (TJ-FAM-026): a BOM, a CR before the LF, a raw U+2028 or
    U+2029 -- each reported once per file, at the first committed line that has it. Returns the per-line check."""
    seen = set()

    def check(line_no, offset, data):
        if "bom" not in seen and offset == 0 and data.startswith(BOM):
            seen.add("bom")
            findings.add("writer_violation_bom", path, line_no, offset)
        if "crlf" not in seen and data.endswith(b"\r"):
            seen.add("crlf")
            findings.add("writer_violation_crlf", path, line_no, offset)
        if "separator" not in seen and (b"\xe2\x80\xa8" in data or b"\xe2\x80\xa9" in data):
            seen.add("separator")
            findings.add("writer_violation_unescaped_separator", path, line_no, offset)

    return check


def read_jsonl(path, mode, findings, on_record):
    """Frame one JSONL file; call on_record(obj, line_no, offset, raw) for every parsed object.

    Returns True when the file was read to the end, False when prefix mode stopped it.
    """
    check_violations = writer_violations(path, findings)
    for item in iter_lines(path):
        if item[0] == "torn":
            if MUTANT == "torn-zeros-zero-filled":
                with open(path, "rb") as f:
                    f.seek(item[1])
                    if b"\x00" in f.read(item[2]):
                        findings.add("zero_filled_region", path, offset=item[1])  # defect switch: TJ-FRAME-030
                        continue
            f = findings.add("torn_tail", path, offset=item[1], length=item[2])  # TJ-FRAME-004
            if MUTANT == "torn-checkpoint-used":  # defect switch: TJ-REPLAY-006 (a backward scan that trusts the tail)
                with open(path, "rb") as tail:
                    tail.seek(item[1])
                    raw = tail.read(item[2])
                try:
                    obj = json.loads(raw.decode("utf-8"))
                except ValueError:
                    obj = None
                if isinstance(obj, dict) and obj.get("type") == "checkpoint":
                    on_record(obj, 0, item[1], raw)
            if MUTANT == "torn-is-damage" and mode == "strict":
                raise StrictFailure(f)  # defect switch: TJ-FRAME-024
            if MUTANT == "torn-is-damage" and mode == "prefix":
                return False  # defect switch: TJ-FRAME-024
            continue
        _, line_no, offset, data, length = item
        if data is None:
            f = findings.add("malformed_line" if MUTANT == "oversized-as-malformed" else "oversized_line",  # TJ-FRAME-032
                             path, line_no, offset, length=length)
            if mode == "strict":
                raise StrictFailure(f)
            if mode == "prefix":
                return False
            continue
        check_violations(line_no, offset, data)
        start = 0
        if line_no == 1 and data.startswith(BOM) and MUTANT != "no-bom-skip":  # TJ-FRAME-012 (switch)
            start = 3
        if data.endswith(b"\r"):  # TJ-FRAME-013: one CR before LF
            if MUTANT == "crlf-is-damage":
                findings.add("malformed_line", path, line_no, offset)  # defect switch: TJ-FRAME-013
                continue
            data = data[:-1]
        body = data[start:]
        if body.strip(JSON_WS) == b"" and MUTANT != "blank-is-damage":  # TJ-FRAME-014 (switch)
            findings.add("blank_line", path, line_no, offset)
            continue
        nul = body.find(b"\x00")
        if nul >= 0 and MUTANT != "nul-not-damage":  # TJ-FRAME-028 (switch)
            run_end = nul
            while run_end < len(body) and body[run_end] == 0:
                run_end += 1
            f = findings.add("zero_filled_region", path, line_no, offset, nul_offset=offset + start + nul,
                             nul_length=run_end - nul)
            if mode == "strict":
                raise StrictFailure(f)
            if mode == "prefix":
                return False
            p, obj = _salvage(body, body.rfind(b"\x00") + 1)  # TJ-FRAME-029
            if obj is not None:
                on_record(obj, line_no, offset, body[p:])
            continue
        obj = _parse_object(body)
        if obj is not None and MUTANT == "split-u2028" and "\u2028" in body.decode("utf-8"):
            obj = None  # defect switch: TJ-FRAME-001 (a reader that also breaks lines at U+2028)
        if obj is not None:
            on_record(obj, line_no, offset, body)
            continue
        # Damage (TJ-FRAME-015); salvage only in tolerant mode (§3.5).
        if mode == "tolerant" and MUTANT != "no-salvage":  # defect switch: TJ-FRAME-026
            p, obj = _salvage(body, 1)
            if obj is not None:
                head = _parse_object(body[:p]) if MUTANT == "salvage-head-too" else None
                if head is not None:
                    on_record(head, line_no, offset, body[:p])  # defect switch: TJ-FRAME-027
                findings.add("glued_record", path, line_no, offset, head_length=p)  # TJ-FRAME-026
                on_record(obj, line_no, offset, body[p:])
                continue
        f = findings.add("malformed_line", path, line_no, offset)
        if MUTANT == "damage-raises":
            raise ValueError("malformed line %d of %s" % (line_no, path))  # defect switch: TJ-FRAME-018
        if mode == "strict" and MUTANT != "strict-reads-on":  # defect switch: TJ-FRAME-022
            raise StrictFailure(f)
        if mode == "prefix" and MUTANT != "prefix-reads-on":  # defect switch: TJ-FRAME-021
            return False
    return True


# ---------------------------------------------------------------------------
# Store discovery (spec §4.2, §4.4, §4.5)
# ---------------------------------------------------------------------------

RESERVED = [
    re.compile(r".*\.lock"),
    re.compile(r".*\.lock\.takeover"),
    re.compile(r"\.turnjournal-sweep\.lock"),
    re.compile(r"\..+\.tmp"),
    re.compile(r".+\.[0-9]+\.torn"),
]
DAY_DIRS = re.compile(r"^[0-9]+/[0-9]+/[0-9]+$")


def is_reserved(name):
    return any(rx.fullmatch(name) for rx in RESERVED)


def layout_hint(path):
    parts = path.split(os.sep)
    name = parts[-1]
    if len(parts) >= 2 and parts[-2] == "_turn_journal":
        return "turn"
    if name == "events.jsonl":
        return "event"
    if len(parts) >= 5 and parts[-5] == "sessions" and DAY_DIRS.match("/".join(parts[-4:-1])):
        return "run"
    return None


def discover(paths, findings):
    """Expand the paths into (kind, path): kind 'jsonl' or 'state'."""
    out = []
    for given in paths:
        given = os.path.abspath(given)
        if os.path.isdir(given):
            for dirpath, dirnames, filenames in os.walk(given):
                dirnames.sort()
                for name in sorted(filenames):
                    full = os.path.join(dirpath, name)
                    if is_reserved(name) and MUTANT == "reserved-scanned":
                        findings.add("unrecognised_file", full)  # defect switch: TJ-FAM-020
                    if is_reserved(name) or not (name.endswith(".jsonl") or name.endswith(".json")):
                        continue  # TJ-FAM-020; other names are not the store's
                    # lstat: a link found in a store is never followed (TJ-FAM-025), a FIFO never opened (TJ-FAM-024).
                    mode = os.lstat(full).st_mode
                    follows = MUTANT == "reader-follows-links" and stat.S_ISLNK(mode) and os.path.isfile(full)
                    opens = MUTANT == "reader-opens-fifo" and stat.S_ISFIFO(mode)
                    if not stat.S_ISREG(mode) and not follows and not opens:  # defect switches: TJ-FAM-025, -024
                        findings.add("special_file", full)
                        continue
                    if name.endswith(".jsonl"):
                        out.append(("jsonl", full))
                        if os.path.basename(dirpath) == "_turn_journal" and "~" in name:
                            shard = name[: -len(".jsonl")].split("~", 1)[1]
                            if not valid_identifier(shard):
                                findings.add("unrecognised_file", full, reason="shard name is not an identifier")
                    elif name.endswith(".json"):
                        if os.path.basename(dirpath) == "state":
                            out.append(("state", full))
                        else:
                            findings.add("unrecognised_file", full)  # TJ-FAM-008
        elif os.path.exists(given) and not stat.S_ISREG(os.stat(given).st_mode):
            findings.add("special_file", given)  # TJ-FAM-024: given explicitly (a link to a regular file is followed)
        elif given.endswith(".json"):
            out.append(("state", given))
        else:
            out.append(("jsonl", given))
    # One order for every reader: by full path (the order findings of duplicates depend on).
    out.sort(key=lambda item: item[1])
    return out


# ---------------------------------------------------------------------------
# Reading one JSONL file: classification, version, validation (§4, §9)
# ---------------------------------------------------------------------------


class JournalFile:
    def __init__(self, path, findings=None):
        self.path = path
        self.findings = findings
        self.family = None  # decided by the first record of a family, else the layout hint
        self.mixed_reported = False
        self.records = []  # accepted records of the file's family: dicts with obj, type, line, offset, raw
        self.unsupported_file = False
        self.header_checked = False
        self.damage_lines = []  # lines yielding malformed_line/zero_filled_region/oversized_line/invalid_record
        self.strict_failure = None  # the finding a strict-mode read of this file stopped at
        self.accepted_seqs = []  # event family: seqs of the records the fold accepted, in file order
        self.routed = False  # some record of the file's family reached the fold (accepted or not)
        self.accepted = 0  # records accepted so far (kept or folded)
        self.stream = False  # fold event and run records while reading instead of keeping them (TJ-FRAME-033)
        self.fold = None  # the streaming fold of an event log or run file, created by its first accepted record

    def accept(self, rec):
        """Take an accepted record: kept in ``records``, or, when streaming, folded at once and dropped, so that the
        memory of a read follows the derived state, not the file (TJ-FRAME-033). A turn file keeps its records (they are
        the fold's input across shards) but not its unknown and extension records, which the fold ignores."""
        self.accepted += 1
        if not self.stream or MUTANT == "records-kept":  # defect switch: TJ-FRAME-033 (every record held)
            self.records.append(rec)
        elif self.family == "event":
            if self.fold is None:
                self.fold = EventFold(self.path, self.findings)
            self.fold.feed(rec)
        elif self.family == "run":
            if self.fold is None:
                self.fold = RunFold(self.path, self.findings)
            self.fold.feed(rec)
        elif not rec.get("unknown") or MUTANT == "extension-event-counts":
            self.records.append(rec)


def read_journal_file(path, mode, findings, stream=False):
    """Read one JSONL file. With ``stream``, event and run records are folded as they are read (the store read);
    without, every accepted record is kept in ``records`` for callers that rewrite or append to the file."""
    jf = JournalFile(path, findings)
    jf.stream = stream
    mark = len(findings.items)

    def invalid(line_no, offset, reason):
        f = findings.add("invalid_record", path, line_no, offset, reason=reason)
        if mode == "strict":
            raise StrictFailure(f)

    def on_record(obj, line_no, offset, raw):
        family, rtype = classify(obj)
        if jf.unsupported_file and family != "run" and family in ("turn", "event", "state"):
            _mixed(line_no, offset)
            return
        if jf.unsupported_file:
            return  # TJ-COMPAT-012: records after a header of another version are not judged by v1 rules
        if family == "bad":  # rule 7, TJ-FAM-023
            if MUTANT == "bad-discriminator-ignored":
                return  # defect switch: TJ-FAM-023
            invalid(line_no, offset, "discriminator is not a string")
            return
        if family is None:
            if (rtype is None or not EXTENSION.match(rtype)) and MUTANT != "no-unknown-object":  # switch: TJ-FAM-002
                findings.add("unknown_record", path, line_no, offset)  # TJ-FAM-002
            return
        if family == "state":
            if MUTANT != "state-line-silent":  # defect switch: TJ-FAM-009
                _mixed(line_no, offset)  # TJ-FAM-009: a JSONL file is never a state document
            return
        if jf.family is None:
            jf.family = family
        elif family != jf.family:
            _mixed(line_no, offset)  # TJ-FAM-006/007
            if MUTANT != "mixed-records-kept":  # defect switch: TJ-FAM-007
                return
        jf.routed = True
        if jf.unsupported_file:
            return  # TJ-COMPAT-012
        if MUTANT in LAX and LAX[MUTANT](family, rtype, obj):
            jf.accept({"obj": obj, "type": rtype, "line": line_no, "offset": offset, "raw": raw})
            return  # defect switch: the rule named in LAX
        # Versions before types (TJ-COMPAT-014).
        if MUTANT == "type-before-version" and family == "turn" and rtype not in TURN_DEFS \
                and not EXTENSION.match(rtype):
            findings.add("unknown_record", path, line_no, offset)  # defect switch: TJ-COMPAT-014
            return
        if family == "turn":
            if "version" not in obj or not is_integer(obj["version"]):
                invalid(line_no, offset, "version missing or not an integer")  # TJ-COMPAT-013
                return
            if obj["version"] != 1:
                findings.add("unsupported_version", path, line_no, offset)  # TJ-COMPAT-011
                return
        elif family == "event":
            if "version" in obj:
                if not is_integer(obj["version"]):
                    invalid(line_no, offset, "version not an integer")
                    return
                if obj["version"] != 1:
                    findings.add("unsupported_version", path, line_no, offset)
                    return
        elif family == "run" and rtype == "header":
            sv = obj.get("schema_version")
            if "schema_version" in obj and not is_integer(sv):
                invalid(line_no, offset, "schema_version not an integer")
                return
            if is_integer(sv) and sv != 1 and jf.family == "run" and not jf.accepted:
                jf.unsupported_file = True
                findings.add("unsupported_version", path, line_no, offset)
                return
        defs = {"turn": TURN_DEFS, "event": EVENT_DEFS, "run": RUN_DEFS}[family]
        if MUTANT == "turn-id-identifier-only" and family == "turn" and isinstance(obj.get("turn_id"), str) \
                and not valid_identifier(obj["turn_id"]):
            invalid(line_no, offset, "turn_id is not an identifier")  # defect switch: TJ-TURN-005
            return
        if MUTANT == "closed-reason-enum" and rtype == "interrupted" and obj.get("reason") not in (
                "error", "cancelled", "server_startup_recovery", "timeout"):
            invalid(line_no, offset, "unknown reason")  # defect switch: TJ-COMPAT-009
            return
        if MUTANT == "strict-timestamps" and family == "run" and isinstance(obj.get("ts"), str) and not re.fullmatch(
                r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", obj["ts"]):
            invalid(line_no, offset, "ts is not RFC 3339")  # defect switch: TJ-FAM-022
            return
        if MUTANT == "reject-unknown-members" and any(k not in _schema_members() for k in obj):
            invalid(line_no, offset, "unknown member")  # defect switch: TJ-COMPAT-001
            return
        if rtype in defs:
            if not valid_def(obj, defs[rtype]) and MUTANT != "schema-not-checked":  # defect switch: TJ-COMPAT-017
                invalid(line_no, offset, "fails $defs/" + defs[rtype])  # TJ-COMPAT-017
                if MUTANT == "invalid-checkpoint-resets" and rtype == "checkpoint":  # defect switch: TJ-REPLAY-008
                    jf.accept({"obj": dict(obj, payload={"messages": []}), "type": rtype, "line": line_no,
                                       "offset": offset, "raw": raw})
                return
            if MUTANT == "role-required" and rtype == "submitted" and "role" not in obj:  # defect switch: TJ-TURN-016
                invalid(line_no, offset, "submitted without role")
                return
            jf.accept({"obj": obj, "type": rtype, "line": line_no, "offset": offset, "raw": raw})
            return
        if not valid_def(obj, ENVELOPES[family]):
            invalid(line_no, offset, "fails $defs/" + ENVELOPES[family])
            return
        if MUTANT == "reject-unknown-type":
            invalid(line_no, offset, "unknown type")  # defect switch: TJ-COMPAT-005
            return
        if not EXTENSION.match(rtype) or MUTANT == "extension-reported":  # defect switch: TJ-COMPAT-006
            findings.add("unknown_record", path, line_no, offset)  # TJ-COMPAT-005
        # Unknown and extension records stay for the event-log seq checks (§6.5) and run ordering.
        jf.accept({"obj": obj, "type": rtype, "line": line_no, "offset": offset, "raw": raw, "unknown": True})

    def _mixed(line_no, offset):
        if not jf.mixed_reported and MUTANT != "no-mixed-families":  # defect switch: TJ-FAM-006
            jf.mixed_reported = True
            findings.add("mixed_families", path, line_no, offset)

    if MUTANT == "family-from-name" and layout_hint(path) is None:
        findings.add("unrecognised_file", path)  # defect switch: TJ-FAM-005, TJ-FAM-004
        return jf
    try:
        read_jsonl(path, mode, findings, on_record)
    except StrictFailure as failure:
        # A strict read of this file failed: the file yields nothing but the failure (TJ-FRAME-022/023).
        jf.strict_failure = failure.finding
        if MUTANT == "strict-failure-no-line":  # defect switch: TJ-FRAME-023
            jf.strict_failure = {k: v for k, v in failure.finding.items() if k not in ("line", "offset")}
        del findings.items[mark:]
        findings.items.append(jf.strict_failure)
        jf.records = []
        jf.fold = None
        jf.family = None
        jf.routed = False
        jf.damage_lines = []
    if jf.family is None:
        jf.family = layout_hint(path)
        if jf.family is None:
            findings.add("unrecognised_file", path)  # TJ-FAM-005
    for f in findings.items[mark:]:
        if f.get("file") == path and f["code"] in ("malformed_line", "zero_filled_region", "oversized_line",
                                                   "invalid_record") \
                and "line" in f:
            jf.damage_lines.append(f["line"])
    return jf


# ---------------------------------------------------------------------------
# Turn derivation (spec §10)
# ---------------------------------------------------------------------------


def canonical_scalar(value):
    """The canonical text of a JSON scalar: numbers that are equal as JSON values print alike (§4.6)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if is_number(value):
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e300:
            return str(int(value))
        if isinstance(value, float):
            return repr(value)
        return str(value)
    return json.dumps(value, ensure_ascii=True)


class _Text(str):
    """Text already written out, on canonical()'s work stack beside the values still to write."""


def canonical(value):
    """A string equal for JSON values that are equal (§4.6), at any depth the parser accepted (TJ-DERIVE-014): an
    explicit work stack instead of recursion, which Python stops at about 1,000 frames."""
    if MUTANT == "recursive-canonical":
        return _canonical_recursive(value)  # defect switch: TJ-DERIVE-014
    out = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item)
        elif isinstance(item, list):
            parts = [_Text("[")]
            for i, v in enumerate(item):
                parts.extend((_Text(","), v) if i else (v,))
            parts.append(_Text("]"))
            stack.extend(reversed(parts))
        elif isinstance(item, dict):
            parts = [_Text("{")]
            for i, k in enumerate(sorted(item)):
                parts.extend(((_Text(",") if i else _Text("")), _Text(json.dumps(k, ensure_ascii=True) + ":"), item[k]))
            parts.append(_Text("}"))
            stack.extend(reversed(parts))
        else:
            out.append(canonical_scalar(item))
    return "".join(out)


def _canonical_recursive(value):
    if isinstance(value, list):
        return "[" + ",".join(_canonical_recursive(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=True) + ":" + _canonical_recursive(value[k])
                              for k in sorted(value)) + "}"
    return canonical_scalar(value)


def turn_session_id(path):
    name = os.path.basename(path)
    if name.endswith(".jsonl"):
        name = name[: -len(".jsonl")]
    return name if MUTANT == "shard-own-session" else name.split("~", 1)[0]  # defect switch: TJ-FAM-016


def derive_sessions(turn_files, findings):
    """Group turn files into sessions (TJ-FAM-016) and fold each (§10.2). Returns {sid: {tid: turn}}."""
    sessions = {}
    for jf in turn_files:
        sid = turn_session_id(jf.path)
        if MUTANT == "session-from-records":  # defect switch: TJ-FAM-017 (the records' session id over the name)
            sid = next((r["obj"]["session_id"] for r in jf.records if r.get("type") == "submitted"
                        and isinstance(r["obj"].get("session_id"), str)), sid)
        if MUTANT == "first-shard-only" and sid in sessions:
            continue  # defect switch: TJ-DERIVE-004
        if not valid_identifier(sid) and MUTANT != "no-invalid-session-id":  # defect switch: TJ-FAM-012
            findings.add("invalid_session_id", jf.path)  # TJ-FAM-012
        sessions.setdefault(sid, []).append(jf)
    derived = {}
    for sid in sorted(sessions):
        derived[sid] = fold_session(sid, sessions[sid], findings)
    # A session is listed once a record of the turn family was read for it, even when none was accepted.
    listed = {turn_session_id(jf.path) for jf in turn_files if jf.routed}
    return derived, listed


def fold_session(sid, files, findings):
    removed = set()
    items = []  # (jf, record)
    for jf in files:
        for rec in jf.records:
            obj = rec["obj"]
            rsid = obj.get("session_id")
            if isinstance(rsid, str) and not rec.get("unknown"):
                if not valid_identifier(rsid):
                    findings.add("invalid_session_id", jf.path, rec["line"], rec["offset"])  # TJ-FAM-012
                elif rsid != sid and MUTANT != "no-session-mismatch":  # defect switch: TJ-FAM-018
                    findings.add("session_mismatch", jf.path, rec["line"], rec["offset"])  # TJ-FAM-018
            if rec.get("unknown") and MUTANT == "extension-event-counts" and EXTENSION.match(rec["type"]) \
                    and rec["type"].rsplit(".", 1)[1] in RANK and isinstance(obj.get("turn_id"), str):
                rec = dict(rec, type=rec["type"].rsplit(".", 1)[1], unknown=False)  # defect switch: TJ-DERIVE-005
            if rec.get("unknown"):
                continue
            if rec["type"] == "compacted":
                ids = obj.get("removed_turn_ids")
                if isinstance(ids, list):
                    removed.update(i for i in ids if isinstance(i, str))
                continue
            items.append((jf, rec))
    if MUTANT != "removed-turns-kept":  # defect switch: TJ-DERIVE-006
        items = [(jf, rec) for jf, rec in items if rec["obj"]["turn_id"] not in removed]  # TJ-DERIVE-006

    # event_after_terminal: line order within one file (TJ-DERIVE-009).
    for jf in files:
        terminal_seen = set()
        for rec in jf.records:
            if rec.get("unknown") or rec["type"] == "compacted":
                continue
            tid = rec["obj"]["turn_id"]
            if tid in removed:
                continue
            terminal = RANK[rec["type"]] == 3
            if MUTANT == "terminal-member-decides" and isinstance(rec["obj"].get("terminal"), bool):
                terminal = rec["obj"]["terminal"]  # defect switch: TJ-TURN-010
            if terminal:
                terminal_seen.add(tid)
            elif tid in terminal_seen and MUTANT != "no-event-after-terminal":  # defect switch: TJ-DERIVE-009
                findings.add("event_after_terminal", jf.path, rec["line"], rec["offset"], turn_id=tid)

    turns = {}
    for jf, rec in items:
        tid = rec["obj"]["turn_id"]
        turn = turns.setdefault(tid, {"events": {}, "files": [], "seen": {}})
        if jf.path not in turn["files"]:
            turn["files"].append(jf.path)
        key = canonical(rec["obj"])
        if key in turn["seen"] and MUTANT != "no-dedupe":  # defect switch: TJ-DERIVE-011
            findings.add("duplicate_event", jf.path, rec["line"], rec["offset"], turn_id=tid)  # TJ-DERIVE-011
            continue
        turn["seen"][key] = True
        same_name = turn["events"].setdefault(rec["type"], [])
        if same_name and MUTANT != "no-conflicting-duplicate":  # defect switch: TJ-DERIVE-013
            # A second, different record of one event name (TJ-DERIVE-013), reported where it is met in read order.
            findings.add("conflicting_duplicate", jf.path, rec["line"], rec["offset"], turn_id=tid)
        same_name.append((rec["raw"], jf.path, rec))

    out = {}
    for tid in sorted(turns):  # TJ-DERIVE-007 (code point order: Python compares str by code point)
        turn = turns[tid]
        events = turn["events"]
        reps = {}
        for name, recs in events.items():
            reps[name] = min(recs, key=lambda r: r[0])  # TJ-DERIVE-013: smallest raw bytes
        rank = max(RANK[name] for name in events)
        if MUTANT == "last-event-wins":  # defect switch: TJ-DERIVE-001, TJ-DERIVE-002
            last = max((r for recs in events.values() for r in recs), key=lambda r: (r[1], r[2]["line"]))
            rank = RANK[last[2]["type"]]
        if rank < 3:
            state = [n for n in events if RANK[n] == rank][0]
        else:
            state = "completed" if "completed" in events and not (
                MUTANT == "interrupted-wins" and "interrupted" in events) else "interrupted"  # switch: TJ-DERIVE-010
            if "completed" in events and "interrupted" in events:
                findings.add("terminal_conflict", turn_id=tid)  # TJ-DERIVE-010: a session-level finding
        orphan = "submitted" not in events
        first_file = reps["submitted"][1] if not orphan else turn["files"][0]
        if orphan and MUTANT != "no-orphan-finding":  # defect switch: TJ-DERIVE-012
            findings.add("orphan_turn", turn_id=tid)  # TJ-DERIVE-012: a session-level finding
        out[tid] = {"turn_id": tid, "session_id": sid, "state": state, "orphan": orphan,
                    "file": first_file, "files": list(turn["files"])}
    return out


# ---------------------------------------------------------------------------
# Event logs (spec §6.5, §15)
# ---------------------------------------------------------------------------


class SeqSet:
    """The accepted seqs of an event log as ascending intervals: they only grow, so a log without gaps is one interval
    and the set's size follows the gaps (each one a finding), not the records (TJ-FRAME-033)."""

    def __init__(self):
        self.intervals = []  # [first, last] pairs, ascending, disjoint

    def add(self, seq):
        """Add a seq; a fold adds them ascending, except a mutant that keeps regressed seqs."""
        if self.intervals and seq <= self.intervals[-1][1]:
            if seq not in self:
                import bisect
                bisect.insort(self.intervals, [seq, seq])
            return
        if self.intervals and self.intervals[-1][1] + 1 == seq:
            self.intervals[-1][1] = seq
        else:
            self.intervals.append([seq, seq])

    def __contains__(self, seq):
        import bisect
        i = bisect.bisect_right(self.intervals, [seq, float("inf")]) - 1
        return i >= 0 and self.intervals[i][0] <= seq <= self.intervals[i][1]


class EventFold:
    """The fold of an event log (spec §6.5, §15), fed one accepted record at a time in file order."""

    def __init__(self, path, findings, accepted_seqs=None):
        self.path = path
        self.findings = findings
        self.accepted_seqs = accepted_seqs  # a list to append each accepted seq to (replay), or None
        self.messages = []
        self.accepted = SeqSet()
        self.last = None
        self.runs = []  # request ids in chat.started order
        self.run_line = {}
        self.finished = set()
        self.acked = set()
        self.segment = None  # dict(request_id, message_id, text) of the open segment candidate
        self.parts = None  # the split checkpoint being read: dict(line, offset, parts, next, seq, messages)

    def feed_part(self, rec, payload, seq):
        """A checkpoint.part (TJ-REPLAY-019): part 0 opens a set, the part due next (next seq, same count) continues
        it, the last one replaces the list with the parts' messages; anything else leaves the set incomplete."""
        parts = self.parts
        if parts is not None and not (payload["part"] == parts["next"] and payload["parts"] == parts["parts"]
                                      and seq == parts["seq"]):
            self.interrupt_parts()
        if self.parts is None:
            if payload["part"] != 0:
                self.findings.add("incomplete_checkpoint", self.path, rec["line"], rec["offset"])
                return
            self.parts = {"line": rec["line"], "offset": rec["offset"], "parts": payload["parts"], "next": 0,
                          "seq": seq, "messages": []}
        parts = self.parts
        parts["messages"].extend(payload["messages"])
        parts["next"] += 1
        parts["seq"] = seq + 1
        if parts["next"] == parts["parts"]:
            self.parts = None
            self.messages = parts["messages"]

    def interrupt_parts(self):
        parts, self.parts = self.parts, None
        if MUTANT == "incomplete-parts-used":  # defect switch: TJ-REPLAY-019, TJ-REPLAY-020 (trusts a partial set)
            self.messages = parts["messages"]
        self.findings.add("incomplete_checkpoint", self.path, parts["line"], parts["offset"])  # TJ-REPLAY-019

    def feed(self, rec):
        path, findings = self.path, self.findings
        obj = rec["obj"]
        seq = obj.get("seq")
        last = self.last
        if last is not None and seq <= last:  # TJ-EVENT-013/014
            code = "seq_duplicate" if seq in self.accepted and MUTANT != "duplicate-as-regression" else "seq_regression"
            findings.add(code, path, rec["line"], rec["offset"])
            if MUTANT != "regressed-seq-kept":  # defect switch: TJ-EVENT-013
                return
        if last is not None and seq > last + 1 and MUTANT != "no-seq-gap":  # defect switch: TJ-EVENT-015
            findings.add("seq_gap", path, rec["line"], rec["offset"])  # TJ-EVENT-015
        self.accepted.add(seq)
        if self.accepted_seqs is not None:
            self.accepted_seqs.append(seq)
        self.last = seq
        if rec["type"] == "checkpoint.part" and not rec.get("unknown"):
            if MUTANT != "split-checkpoint-ignored":  # defect switch: TJ-REPLAY-019
                self.feed_part(rec, obj["payload"], seq)
            return
        if self.parts is not None:
            self.interrupt_parts()
        if rec.get("unknown"):
            return
        t = rec["type"]
        payload = obj.get("payload")
        messages = self.messages
        if t == "message_append":
            messages.append(payload["message"])
        elif t == "message_edit":
            if "index" in payload and "message" in payload:
                i = int(payload["index"])
                if i < len(messages):
                    messages[i] = payload["message"]
                elif MUTANT == "edit-out-of-range-appends":
                    messages.append(payload["message"])  # defect switch: TJ-REPLAY-002
                else:
                    findings.add("inapplicable_event", path, rec["line"], rec["offset"])
            elif "messages" in payload:  # always, for a valid record (TJ-EVENT-005); not for a lax mutant's
                self.messages = list(payload["messages"])
        elif t == "undo":
            n = int(payload.get("n", 1)) if isinstance(payload, dict) else 1
            if n > len(messages):
                self.messages = []
                findings.add("inapplicable_event", path, rec["line"], rec["offset"])
            else:
                del messages[len(messages) - n:]
        elif t == "checkpoint" and MUTANT != "checkpoint-ignored":  # defect switch: TJ-REPLAY-001
            # defect switch: TJ-REPLAY-004 (folds what came before the checkpoint too)
            self.messages = messages + list(payload["messages"]) if MUTANT == "checkpoint-merges" \
                else list(payload["messages"])
        if t in ("message_append", "message_edit", "undo", "tool.start") or (
                t == "checkpoint" and MUTANT == "checkpoint-closes-segment"):  # defect switch: TJ-REPLAY-011
            self.segment = None
        if t == "chat.started":
            rid = payload["request_id"]
            if rid not in self.run_line:
                self.runs.append(rid)
                self.run_line[rid] = (rec["line"], rec["offset"])
            elif MUTANT != "no-duplicate-run-start":  # TJ-EVENT-016: a second chat.started starts no run
                findings.add("duplicate_run_start", path, rec["line"], rec["offset"])
            self.segment = None
        elif t in FINISHING:
            self.finished.add(payload["request_id"])
        elif t == "delivery.ack":
            if MUTANT == "ack-unknown-run-reported" and payload["request_id"] not in self.run_line:
                findings.add("inapplicable_event", path, rec["line"], rec["offset"])  # defect switch: TJ-REPLAY-017
            self.acked.add(payload["request_id"])
        elif t == "assistant.segment.started":
            self.segment = {"request_id": payload["request_id"], "message_id": payload["message_id"], "text": []}
        elif t == "chat.delta" and self.segment is not None and (
                payload["message_id"] == self.segment["message_id"] or MUTANT == "overlay-any-message-id"):
            self.segment["text"].append(payload["text"])  # TJ-REPLAY-009

    def finish(self):
        """The log's state once every record was fed; reports the abandoned runs (TJ-REPLAY-010)."""
        runs, finished, segment = self.runs, self.finished, self.segment
        if self.parts is not None:  # the file ends inside a split checkpoint (a crash between its parts)
            self.interrupt_parts()
        active = runs[-1] if runs and runs[-1] not in finished else None
        for rid in runs:
            if rid not in finished and rid != active and MUTANT != "no-abandoned-run":  # defect switch: TJ-REPLAY-010
                line, offset = self.run_line[rid]
                self.findings.add("abandoned_run", self.path, line, offset)  # TJ-REPLAY-010
        overlay = "".join(segment["text"]) if segment is not None and active is not None \
            and segment["request_id"] == active else None
        return {
            "last_seq": self.last,
            "messages": self.messages,
            "active_request_id": active,
            "overlay": overlay,
            "undelivered": [rid for rid in runs if rid in finished
                            and (rid not in self.acked or MUTANT == "acks-ignored")],  # defect switch: TJ-REPLAY-015
        }


def fold_event_log(jf, findings):
    """The state of an event log: its streaming fold when the read folded it, else the fold of its kept records
    (which also lists the accepted seqs in ``jf.accepted_seqs``, for replay)."""
    fold = jf.fold
    if fold is None:
        fold = EventFold(jf.path, findings, jf.accepted_seqs)
        for rec in jf.records:
            fold.feed(rec)
    return fold.finish()


def replay(path, after):
    """Spec §15.4: the seqs a client holding every record up to ``after`` receives, or why it gets a snapshot."""
    if not is_integer(after) or after < -1:
        raise ValueError("after must be an integer >= -1")
    findings = Findings()
    jf = read_journal_file(path, "tolerant", findings)
    if jf.family != "event":
        raise ValueError("not an event log: " + path)
    state = fold_event_log(jf, findings)
    last = state["last_seq"]
    first = jf.accepted_seqs[0] if jf.accepted_seqs else None
    if after > (last if last is not None else -1) and MUTANT != "replay-no-ahead":  # defect switch: TJ-REPLAY-014
        return {"reason": "ahead"}  # TJ-REPLAY-014
    if first is not None and after + 1 < first and MUTANT != "replay-no-compacted":  # switch: TJ-REPLAY-013
        return {"reason": "compacted"}  # TJ-REPLAY-013
    if MUTANT == "replay-inclusive":
        return {"seqs": [seq for seq in jf.accepted_seqs if seq >= after]}  # defect switch: TJ-REPLAY-012
    return {"seqs": [seq for seq in jf.accepted_seqs if seq > after]}  # TJ-REPLAY-012


# ---------------------------------------------------------------------------
# Runs (spec §7, §16)
# ---------------------------------------------------------------------------


class RunFold:
    """The fold of a run file (spec §7, §16), fed one accepted record at a time in file order."""

    def __init__(self, path, findings):
        self.path = path
        self.findings = findings
        self.fed = 0
        self.run_id = None
        self.outcome = None
        self.calls = {}  # seq -> {"requests": [(where, ordinal)], "responses": [where]}, where = (line, offset)
        self.ordinal = 0
        self.last_agent_seq = None

    def feed(self, rec):
        path, findings = self.path, self.findings
        obj, t = rec["obj"], rec["type"]
        self.fed += 1
        if self.fed == 1:
            if t != "header" and MUTANT != "no-missing-header":  # defect switch: TJ-RUN-005
                findings.add("missing_header", path, rec["line"], rec["offset"])  # TJ-RUN-005
            self.run_id = obj.get("run_id")
            if isinstance(self.run_id, str) and not valid_identifier(self.run_id):
                findings.add("invalid_run_id", path)  # TJ-FAM-013
            if t == "header":
                return
        where = (rec["line"], rec["offset"])
        if self.outcome is not None:
            # TJ-RUNSEM-002: reported, and (like the reference reader) ignored for everything else too.
            if MUTANT != "no-record-after-run-end":  # defect switch: TJ-RUNSEM-002
                findings.add("record_after_run_end", path, *where)
            return
        if obj.get("run_id") != self.run_id and MUTANT != "no-run-id-mismatch":  # defect switch: TJ-FAM-019
            findings.add("run_id_mismatch", path, *where)  # TJ-FAM-019
        if rec.get("unknown"):
            return
        calls = self.calls
        if t == "run.end":
            outcome = obj["outcome"]  # TJ-RUNSEM-001, TJ-COMPAT-010: carried unchanged
            if MUTANT == "outcome-normalised" and outcome not in ("completed", "error", "cancelled", "interrupted"):
                outcome = "error"  # defect switch: TJ-COMPAT-010
            self.outcome = outcome
        elif t == "llm.request":
            if MUTANT == "llm-seq-from-zero" and not calls and obj["seq"] > 1:
                findings.add("seq_gap", path, *where)  # defect switch: TJ-RUNSEM-009
            key = ("n", self.ordinal) if MUTANT == "pair-by-order" else obj["seq"]  # defect switch: TJ-RUNSEM-003
            call = calls.setdefault(key, {"requests": [], "responses": []})
            if call["requests"] and MUTANT != "no-llm-seq-duplicate":  # defect switch: TJ-RUNSEM-006
                findings.add("seq_duplicate", path, *where)  # TJ-RUNSEM-006
            call["requests"].append((where, self.ordinal))
            self.ordinal += 1
        elif t == "llm.response":
            key = ("n", sum(len(c["responses"]) for c in calls.values())) if MUTANT == "pair-by-order" else obj["seq"]
            calls.setdefault(key, {"requests": [], "responses": []})["responses"].append(where)
        elif t == "agent.event":
            last = self.last_agent_seq
            if MUTANT == "agent-gap-reported" and last is not None and obj["seq"] > last + 1:
                findings.add("seq_gap", path, *where)  # defect switch: TJ-RUNSEM-008
            if last is not None and obj["seq"] <= last and MUTANT != "no-agent-regression":
                findings.add("agent_event_seq_regression", path, *where)  # TJ-RUNSEM-007
            self.last_agent_seq = obj["seq"]

    def finish(self):
        """The run's outcome once every record was fed; reports what only the whole file shows."""
        path, findings, outcome = self.path, self.findings, self.outcome
        if layout_hint(path) == "run":
            rid = os.path.basename(path)[: -len(".jsonl")]
            if not valid_identifier(rid) and MUTANT != "no-invalid-run-id":  # defect switch: TJ-FAM-013
                findings.add("invalid_run_id", path)  # TJ-FAM-013
        # TJ-RUNSEM-003..005: requests and responses of one seq pair off one to one, in file order.
        for call in self.calls.values():
            for where, n in call["requests"][len(call["responses"]):]:
                if outcome is None and n == self.ordinal - 1:
                    continue  # the last request of a cut-off run (TJ-RUNSEM-004)
                if MUTANT != "no-unpaired-request":  # defect switch: TJ-RUNSEM-004
                    findings.add("unpaired_llm_request", path, *where)
            for where in call["responses"][len(call["requests"]):]:
                if MUTANT != "no-unpaired-response":  # defect switch: TJ-RUNSEM-005
                    findings.add("unpaired_llm_response", path, *where)
        max_request = max((seq for seq, call in self.calls.items() if call["requests"] and not isinstance(seq, tuple)),
                          default=None)
        unfinished = "cancelled" if MUTANT == "no-end-means-cancelled" else "incomplete"  # switch: TJ-RECOV-012
        return {"run_id": self.run_id, "outcome": outcome if outcome is not None else unfinished,
                "max_request_seq": max_request}


def fold_run(jf, findings):
    """The outcome of a run file: its streaming fold when the read folded it, else the fold of its kept records."""
    fold = jf.fold
    if fold is None:
        fold = RunFold(jf.path, findings)
        for rec in jf.records:
            fold.feed(rec)
    return fold.finish()


# ---------------------------------------------------------------------------
# State documents (spec §8)
# ---------------------------------------------------------------------------


def read_state(path, mode, findings):
    name = os.path.basename(path)
    sid = name[: -len(".json")] if name.endswith(".json") else name
    if not valid_identifier(sid):
        findings.add("invalid_session_id", path)  # TJ-FAM-012
    size = os.path.getsize(path)
    obj = None
    if size <= DOCUMENT_LIMIT:
        with open(path, "rb") as f:
            data = f.read()
        if data.startswith(BOM) and MUTANT != "state-bom-rejected":  # defect switch: TJ-STATE-002
            data = data[3:]
        obj = _parse_object(data)
    if obj is None and MUTANT == "malformed-state-raises" and mode != "strict":
        raise ValueError("malformed state document " + path)  # defect switch: TJ-STATE-004
    if obj is None and MUTANT == "malformed-state-silent":
        return None  # defect switch: TJ-STATE-003
    if obj is None:
        f = findings.add("malformed_document", path)  # TJ-STATE-003
        if mode == "strict":
            raise StrictFailure(f)
        return None
    sv = obj.get("schema_version")
    if is_integer(sv) and sv != 1:
        findings.add("unsupported_version", path)
        return None
    if not valid_def(obj, "SessionState") and MUTANT != "lax-state":  # defect switch: TJ-STATE-001
        f = findings.add("invalid_record", path)
        if mode == "strict":
            raise StrictFailure(f)
        return None
    return obj


# ---------------------------------------------------------------------------
# Locks and audit (spec §11.4, §12, §13.2)
# ---------------------------------------------------------------------------


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


def holder_proved_dead(data):
    """Spec §11.4: a lock's holder is proved dead only on this host, by a changed boot id or a missing pid."""
    obj = _parse_object(data)
    if obj is not None and MUTANT == "pid-only-liveness":
        obj["host"] = socket.gethostname()  # defect switch: TJ-DUR-020
    if obj is None or obj.get("host") != socket.gethostname():
        return False  # unparseable, empty, or another host: never proved dead (TJ-DUR-020)
    boot = obj.get("boot_id")
    current = _boot_id()
    if isinstance(boot, str) and current is not None and boot != current:
        return True
    pid = obj.get("pid")
    if not is_integer(pid) or pid <= 0:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return _is_zombie(int(pid))


def _is_zombie(pid):
    """A killed process whose parent has not reaped it still answers kill(pid, 0); it no longer runs (Linux)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return False
    state = stat[stat.rfind(b")") + 2:][:1]
    return state in (b"Z", b"X")


def held_by_live_writer(path):
    """True when <path>.lock exists and its holder cannot be proved dead (TJ-DUR-020)."""
    try:
        with open(path + ".lock", "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return not holder_proved_dead(data)


def audit(derived, turn_files, findings):
    plan = []
    live = {jf.path: held_by_live_writer(jf.path) for jf in turn_files}
    if MUTANT == "plan-takes-locks":  # defect switch: TJ-RECOV-001 (the plan probes by locking, and keeps the locks)
        for jf in turn_files:
            if not live[jf.path]:
                with open(jf.path + ".lock", "w") as f:
                    f.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "token": "plan"}))
    for jf in turn_files:
        for line in sorted(set(jf.damage_lines)) if MUTANT != "no-malformed-event-finding" else ():  # TJ-AUDIT-009
            findings.add("turn_journal_malformed_event", jf.path, line)  # TJ-AUDIT-009
    for sid in sorted(derived):
        for tid in sorted(derived[sid]):
            turn = derived[sid][tid]
            if turn["state"] == "interrupted" and MUTANT != "no-interrupted-finding":  # switch: TJ-AUDIT-008
                findings.add("turn_journal_interrupted_turn", turn["file"], turn_id=tid)  # TJ-AUDIT-008
            if turn["state"] in ("completed", "interrupted"):
                continue
            abandoned = MUTANT == "plan-ignores-locks" or not any(live.get(p) for p in turn["files"])  # TJ-RECOV-002
            if MUTANT != "no-pending-finding":  # defect switch: TJ-AUDIT-007
                findings.add("turn_journal_pending_turn", turn["file"], turn_id=tid,
                         severity="warn" if abandoned else "info", repairable=abandoned)  # TJ-AUDIT-007
            if abandoned:
                actions = [] if turn["orphan"] or MUTANT == "plan-no-user-message" else ["ensure_user_message"]
                actions += ["ensure_interruption_marker", "append_interrupted"]
                plan.append({"session_id": sid, "turn_id": tid, "actions": actions})
    return plan


# ---------------------------------------------------------------------------
# Writer (spec §11): lock, torn-tail repair, durable appends
# ---------------------------------------------------------------------------

SAFE_INTEGER = 2 ** 53 - 1


class WriterError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code  # an adapter error code: journal_locked, bad_request or failed


def fsync_dir(path):
    if MUTANT == "no-dir-fsync":
        return  # defect switch: TJ-DUR-007
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path):
    """Create missing directories, fsyncing the parent of each one created (TJ-DUR-008)."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            pass
        fsync_dir(os.path.dirname(d))


def write_all(fd, data):
    """One logical append: repeat the write after a short write (TJ-DUR-002)."""
    if MUTANT == "single-write":
        os.write(fd, data)  # defect switch: TJ-DUR-002 (a short count taken for the whole line)
        return
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _synced_temporary(target, data):
    """A temporary file beside ``target`` (spec §4.5 name) holding ``data``, fsync'ed; returns its path."""
    directory, name = os.path.split(target)
    tmp = os.path.join(directory, ".%s.%s.tmp" % (name, os.urandom(6).hex()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def atomic_replace(target, data):
    """Spec §11.2: temporary file in the same directory, fsync, rename, fsync the directory (TJ-DUR-009)."""
    tmp = _synced_temporary(target, data)
    os.rename(tmp, target)
    fsync_dir(os.path.dirname(target))


def _link_exclusively(target, data):
    """Create ``target`` holding ``data``, never visible empty (TJ-DUR-029): link a synced temporary file."""
    if MUTANT == "lock-written-in-place":  # defect switch: TJ-DUR-029 (the lock exists empty until written)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(os.path.dirname(target))
        return
    tmp = _synced_temporary(target, data)
    try:
        os.link(tmp, target)  # fails when target exists, like O_CREAT|O_EXCL
    finally:
        os.unlink(tmp)
    fsync_dir(os.path.dirname(target))


def _read_lock(path, wait=True):
    """The lock's bytes, or None when it is gone; waits briefly for an empty lock to fill."""
    import time
    for _ in range(20 if wait else 1):
        try:
            fd = open_regular(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            data = b""
            while True:
                block = os.read(fd, CHUNK)
                if not block:
                    break
                data += block
        finally:
            os.close(fd)
        if data or not wait:
            return data
        time.sleep(0.025)
    return data


def acquire_lock(file):
    """Take ``<file>.lock`` (spec §11.4), taking over a lock whose holder is proved dead (TJ-DUR-019, TJ-DUR-025)."""
    import time
    lock = file + ".lock"
    takeover = lock + ".takeover"
    token = os.urandom(16).hex()
    me = {"pid": os.getpid(), "host": socket.gethostname(), "token": token}
    if _boot_id() is not None:
        me["boot_id"] = _boot_id()  # TJ-DUR-027
    mine = json.dumps(me).encode()
    for _ in range(100):
        try:
            _link_exclusively(lock, mine)
            return token
        except FileExistsError:
            pass
        text = _read_lock(lock)
        if text is None:
            continue  # released meanwhile: try again
        if not holder_proved_dead(text):
            raise WriterError("journal_locked", "%s is locked by a live writer: %s"
                              % (file, text.decode("utf-8", "replace")[:200]))  # TJ-DUR-018
        # Take-over protocol, step 1.
        try:
            _link_exclusively(takeover, mine)
        except FileExistsError:
            other = _read_lock(takeover)
            if other is not None and holder_proved_dead(other) and _read_lock(takeover, wait=False) == other:
                try:
                    os.unlink(takeover)
                except FileNotFoundError:
                    pass
            time.sleep(0.01)
            continue
        try:
            if _read_lock(lock, wait=False) == text:  # step 2: still the same stale lock
                try:
                    os.unlink(lock)
                except FileNotFoundError:
                    pass
                fsync_dir(os.path.dirname(lock))
        finally:
            os.unlink(takeover)  # step 3, then create the lock as usual
    raise WriterError("journal_locked", "could not take the lock of %s: it keeps changing hands" % file)


def release_lock(file, token):
    """Remove our lock, only when it still holds our token (TJ-DUR-026)."""
    lock = file + ".lock"
    data = _read_lock(lock, wait=False)
    obj = _parse_object(data) if data else None
    if obj is not None and (obj.get("token") == token or MUTANT == "unlink-any-lock"):  # defect switch: TJ-DUR-026
        os.unlink(lock)
        fsync_dir(os.path.dirname(lock))


def repair_torn_tail(fd, file):
    """TJ-DUR-005: copy the torn bytes to <file>.<offset>.torn (synced), truncate to the last LF, fsync.

    The NUL bytes that end the file are pre-allocated space (TJ-FRAME-036), not torn bytes: they are not copied, a
    file whose last LF only they follow has no torn tail, and the truncation removes them too, so an append (O_APPEND)
    lands right after the last line, never after the space (TJ-DUR-033)."""
    size = os.fstat(fd).st_size
    end = size
    last_lf = -1
    data_end = None  # the end of the last byte that is not NUL
    while end > 0 and last_lf < 0:
        start = max(0, end - CHUNK)
        block = os.pread(fd, end - start, start)
        if data_end is None:
            kept = len(block.rstrip(b"\x00"))
            if kept > 0 or start == 0:
                data_end = start + kept
        i = block.rfind(b"\n")
        if i >= 0:
            last_lf = start + i
        end = start
    keep = last_lf + 1
    if keep == size:
        return
    data_end = keep if data_end is None else max(keep, data_end)
    if data_end > keep:
        torn = bytearray()
        pos = keep
        while pos < data_end:
            block = os.pread(fd, min(CHUNK, data_end - pos), pos)
            if not block:
                break
            torn += block
            pos += len(block)
        atomic_replace("%s.%d.torn" % (file, keep), bytes(torn))
    os.ftruncate(fd, keep)
    os.fsync(fd)


def _check_integers(value):
    if isinstance(value, bool):
        return
    if isinstance(value, int) and abs(value) > SAFE_INTEGER and MUTANT != "unsafe-integers-written":  # TJ-FRAME-035
        raise WriterError("bad_request", "integer %d is outside -(2^53-1)..2^53-1 (TJ-FRAME-035)" % value)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise WriterError("bad_request", "not a JSON number: %r" % value)
    if isinstance(value, list):
        for v in value:
            _check_integers(v)
    elif isinstance(value, dict):
        for v in value.values():
            _check_integers(v)


def encode_record(record):
    """The record's line (TJ-FRAME-005..009): compact JSON, ASCII-escaped (so U+2028/U+2029 are escaped), one LF."""
    if not isinstance(record, dict):
        raise WriterError("bad_request", "a journal record must be a JSON object")
    _check_integers(record)
    family, rtype = classify(record)
    if family == "bad":
        raise WriterError("bad_request", "the record's event or type member is not a string")
    defs = {"turn": TURN_DEFS, "event": EVENT_DEFS, "run": RUN_DEFS}.get(family, {})
    if rtype in defs and not valid_def(record, defs[rtype]) and MUTANT != "accept-invalid":  # switch: TJ-COMPAT-018
        raise WriterError("bad_request", "refusing to write an invalid %r record ($defs/%s)"
                          % (rtype, defs[rtype]))  # TJ-COMPAT-018, TJ-TURN-015
    if family == "state":
        raise WriterError("bad_request", "a state document is not appended to a journal")
    line = json.dumps(record, ensure_ascii=MUTANT != "latin1-lines", separators=(",", ":"), allow_nan=False,
                      sort_keys=MUTANT == "sorted-members").encode(  # defect switches: TJ-FRAME-005, TJ-FRAME-006
        "latin-1" if MUTANT == "latin1-lines" else "ascii", "replace") + (
        b"\r\n" if MUTANT == "crlf-lines" else b"\n")  # defect switch: TJ-FRAME-009
    if MUTANT == "duplicate-member" and len(record) > 0:  # defect switch: TJ-FRAME-010 (first member written twice)
        first = next(iter(record))
        member = json.dumps({first: record[first]}, ensure_ascii=True, separators=(",", ":"))[1:-1].encode("ascii")
        line = line[:-2] + b"," + member + b"}\n"
    if len(line) - 1 > LINE_LIMIT and MUTANT != "no-line-limit":  # defect switch: TJ-DUR-028
        raise WriterError("bad_request", "the line would be %d bytes, over the %d-byte limit (TJ-DUR-028)"
                          % (len(line) - 1, LINE_LIMIT))
    return line


def open_regular(path, flags, mode=0o644):
    """Open ``path`` never through a symbolic link in its last component (TJ-DUR-031) and without waiting for the
    other end of a FIFO, then refuse anything but a regular file (TJ-DUR-032)."""
    safe = 0 if MUTANT == "follow-symlink" else os.O_NOFOLLOW  # defect switch: TJ-DUR-031
    try:
        fd = os.open(path, flags | safe | os.O_NONBLOCK, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise WriterError("failed", "%s is a symbolic link: a writer does not follow it (TJ-DUR-031)" % path)
        raise
    if MUTANT != "no-file-type-check" and not stat.S_ISREG(os.fstat(fd).st_mode):  # defect switch: TJ-DUR-032
        os.close(fd)
        raise WriterError("failed", "%s is not a regular file (TJ-DUR-032)" % path)
    return fd


class AppendFile:
    """One journal file open for appends, under its lock."""

    def __init__(self, file, durability):
        if durability not in ("every", "group", "none"):
            raise WriterError("bad_request", "durability must be every, group or none")
        self.file = file
        self.durability = durability
        self.broken = None
        make_dirs(os.path.dirname(file))
        self.token = acquire_lock(file)
        try:
            try:
                self.fd = open_regular(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL)
                os.fsync(self.fd)
                fsync_dir(os.path.dirname(file))  # TJ-DUR-007
            except FileExistsError:
                self.fd = open_regular(file, os.O_RDWR | os.O_APPEND)
                repair_torn_tail(self.fd, file)  # TJ-DUR-004/005
        except BaseException:
            release_lock(file, self.token)
            raise

    def append(self, record):
        if self.broken is not None:
            raise WriterError("failed", "appends to %s are refused after an earlier failure: %s"
                              % (self.file, self.broken))  # TJ-DUR-021
        line = encode_record(record)
        before = os.fstat(self.fd).st_size
        self.size_before_last = before
        try:
            write_all(self.fd, line)
        except OSError as e:
            if MUTANT == "swallow-write-error":
                return  # defect switch: TJ-DUR-022
            if MUTANT == "no-truncate-after-failure":  # defect switch: TJ-DUR-023 (the half line stays, appends go on)
                raise WriterError("failed", "append to %s failed: %s" % (self.file, e))
            try:
                os.ftruncate(self.fd, before)  # TJ-DUR-023
            except OSError as e2:
                self.broken = "write failed and the file could not be truncated back: %s" % e2
            raise WriterError("failed", "append to %s failed: %s" % (self.file, e))  # TJ-DUR-022
        self.appended = getattr(self, "appended", 0) + 1
        skip = (MUTANT == "no-fdatasync"  # defect switch: TJ-DUR-003
                or (MUTANT == "group-sync-every-4th" and self.durability == "group"
                    and self.appended % 4 != 0)  # defect switch: TJ-DUR-014
                or (MUTANT == "submitted-unsynced" and record.get("event") == "submitted"))  # switch: TJ-DUR-001
        if self.durability != "none" and not skip:
            try:
                os.fdatasync(self.fd)  # TJ-DUR-003: acknowledge only after the sync returns
            except OSError as e:
                if MUTANT != "no-poison":  # defect switch: TJ-DUR-021
                    self.broken = "fdatasync failed: %s" % e
                raise WriterError("failed", "fdatasync of %s failed: %s" % (self.file, e))

    def close(self):
        if MUTANT == "truncate-last-on-close" and getattr(self, "size_before_last", None) is not None:
            os.ftruncate(self.fd, self.size_before_last)  # defect switch: TJ-DUR-024
        try:
            if MUTANT != "no-close-fsync":  # defect switch: TJ-DUR-015
                os.fsync(self.fd)  # TJ-DUR-015 (none); harmless after every/group
        finally:
            os.close(self.fd)
            release_lock(self.file, self.token)


# ---------------------------------------------------------------------------
# Startup recovery (spec §12) and retention (spec §14): features `recovery` and `retention`
# ---------------------------------------------------------------------------

TURN_DIR = "_turn_journal"
# Codes of severity info (spec §13.1); every other finding of the read makes a session unclean (§13.3). The sweep
# does not run audit(): of its turn_journal_* findings it needs only the pending turn, which it reads from the turn
# states (a pending turn is warn, or info under a live writer's lock, whose file the sweep skips anyway).
INFO_CODES = {"blank_line", "unknown_record", "unrecognised_file", "duplicate_event", "stale_lock",
              "writer_violation_crlf", "writer_violation_bom", "writer_violation_unescaped_separator"}


def _turn_store(root):
    """The turn journals under <root>/_turn_journal: (findings, turn files, derived sessions)."""
    findings = Findings()
    directory = os.path.join(root, TURN_DIR)
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    journals = [read_journal_file(os.path.join(directory, n), "tolerant", findings)
                for n in names if n.endswith(".jsonl") and not n.startswith(".")]
    turn_files = [jf for jf in journals if jf.family == "turn"]
    derived, _ = derive_sessions(turn_files, findings)
    return findings, turn_files, derived


def recover_store(root):
    """Spec §12 with no host transcript: one `interrupted` per abandoned turn (TJ-RECOV-004/006), after the writer has
    cut a torn tail (TJ-RECOV-010); journals a live writer holds are left alone (TJ-RECOV-013)."""
    import time
    _, turn_files, derived = _turn_store(root)
    recovered = []
    for sid in sorted(derived):
        for tid in sorted(derived[sid]):
            turn = derived[sid][tid]
            if turn["state"] in ("completed", "interrupted") or any(held_by_live_writer(f) for f in turn["files"]):
                continue
            record = {"version": 1, "event": "interrupted", "turn_id": tid, "session_id": sid}
            for jf in turn_files:
                for rec in jf.records:
                    obj = rec["obj"]
                    if rec["type"] == "submitted" and obj.get("turn_id") == tid and isinstance(obj.get("stream_id"), str):
                        record["stream_id"] = obj["stream_id"]  # TJ-RECOV-006
            record.update({"created_at": time.time(), "reason": "server_startup_recovery", "terminal": True})
            writer = AppendFile(turn["file"], "every")
            try:
                writer.append(record)
            finally:
                writer.close()
            recovered.append({"session_id": sid, "turn_id": tid})
    return recovered


def _lines(data):
    """The lines of ``data`` (bytes) as the reader numbers them: split at LF only, each with its LF; a last line
    without one (a torn tail) as it is. Not ``splitlines``, which also splits at a bare CR inside a damaged line and
    would shift every later line number."""
    parts = data.rstrip(b"\x00").split(b"\n")  # the NUL bytes that end a file are space, no line (TJ-FRAME-036)
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def data_end(path):
    """Where a file's bytes end before its pre-allocated space (TJ-FRAME-036). A writer fills that space without
    changing the file's size, so an unchanged size does not mean nothing was appended (TJ-FRAME-037)."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        while end > 0:
            start = max(0, end - CHUNK)
            f.seek(start)
            kept = len(f.read(end - start).rstrip(b"\x00"))
            if kept > 0:
                return start + kept
            end = start
    return 0


def _identity(path):
    st = os.stat(path)
    return st.st_size, st.st_ino, data_end(path)


def sweep_store(root, now_ms, window_s=None):
    """The retention sweep of <root>/_turn_journal (spec §14.1) for a host without delivery tracking."""
    window = 48 * 3600 if window_s is None else window_s  # TJ-RET-001
    cutoff = now_ms / 1000.0 - window
    directory = os.path.join(root, TURN_DIR)
    dir_token = acquire_lock(os.path.join(directory, ".turnjournal-sweep"))  # TJ-RET-010: refuses when held
    try:
        # Size, identity and data end of every journal as the audit sees it, for TJ-RET-015 (the data end too: an
        # append into another writer's pre-allocated space keeps the size, TJ-FRAME-037).
        audited = {os.path.join(directory, n): _identity(os.path.join(directory, n))
                   for n in os.listdir(directory) if n.endswith(".jsonl")}
        findings, turn_files, derived = _turn_store(root)
        swept = []
        for sid in sorted(derived):
            files = [jf for jf in turn_files if turn_session_id(jf.path) == sid]
            paths = {jf.path for jf in files}
            turns = derived[sid]
            blocking = [f for f in findings.items
                        if (f.get("file") in paths or f.get("turn_id") in turns) and f["code"] not in INFO_CODES]
            if blocking or any(t["state"] not in ("completed", "interrupted") for t in turns.values()):
                continue  # TJ-RET-002: the audit is not clean
            newest = {}
            for jf in files:
                for rec in jf.records:
                    obj = rec["obj"]
                    if rec.get("unknown") or rec["type"] == "compacted":
                        continue
                    at = obj.get("created_at")
                    stamp = at if isinstance(at, (int, float)) and not isinstance(at, bool) else float("inf")
                    newest[obj["turn_id"]] = max(newest.get(obj["turn_id"], float("-inf")), stamp)
            pruned = sorted(tid for tid in turns if newest.get(tid, float("inf")) < cutoff)  # TJ-RET-003
            if not pruned:
                continue
            if any(held_by_live_writer(jf.path) for jf in files):
                continue  # TJ-RET-009
            tokens = []
            try:
                for jf in files:
                    tokens.append((jf.path, acquire_lock(jf.path)))  # TJ-RET-008
                if any(jf.path not in audited or _identity(jf.path) != audited[jf.path] for jf in files):
                    continue  # TJ-RET-015: changed since the audit
                compacted = encode_record({
                    "version": 1, "event": "compacted", "created_at": now_ms / 1000.0, "session_id": sid,
                    "removed_turns": len(pruned), "removed_turn_ids": pruned, "retention_seconds": window})
                for jf in files:
                    drop = {rec["line"] for rec in jf.records
                            if not rec.get("unknown") and rec["type"] != "compacted"
                            and rec["obj"].get("turn_id") in pruned}  # TJ-RET-004, TJ-RET-017
                    if not drop:
                        continue
                    with open(jf.path, "rb") as f:
                        data = f.read()
                    if not data.rstrip(b"\x00").endswith(b"\n"):
                        continue  # a torn tail: the audit was not clean; left for the next sweep
                    kept = [line for number, line in enumerate(_lines(data), 1) if number not in drop]
                    atomic_replace(jf.path, b"".join(kept) + compacted)  # TJ-RET-005, TJ-RET-006, TJ-RET-007
            finally:
                for path, token in tokens:
                    release_lock(path, token)
            swept.append({"session_id": sid, "pruned": pruned})
        return swept
    finally:
        release_lock(os.path.join(directory, ".turnjournal-sweep"), dir_token)


def _iso_ms(ts):
    """Epoch milliseconds of an RFC 3339 timestamp, or None when it does not parse."""
    from datetime import datetime
    if not isinstance(ts, str):
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def compact_event_log(path, now_ms, window_s=None, delivery_window_s=None):
    """Compaction of an event log (spec §14.2): cut at the latest valid checkpoint C with only removable records before
    it, keep C and the rest byte for byte (TJ-RET-012, TJ-RET-014)."""
    window = 48 * 3600 if window_s is None else window_s
    delivery_window = 48 * 3600 if delivery_window_s is None else delivery_window_s  # TJ-LIVE-015
    token = acquire_lock(path)
    try:
        findings = Findings()
        jf = read_journal_file(path, "tolerant", findings)
        if jf.family != "event":
            raise BadRequest("not an event log: " + path)
        def request_id(rec):
            payload = rec["obj"].get("payload")
            rid = payload.get("request_id") if isinstance(payload, dict) else None
            return rid if isinstance(rid, str) and not rec.get("unknown") else None

        runs = {}  # request id -> {"finished": bool, "finished_at": epoch ms of the first finishing record, "acked"}
        for rec in jf.records:
            rid = request_id(rec)
            if rid is None:
                continue
            run = runs.setdefault(rid, {"finished": False, "finished_at": None, "acked": False})
            if rec["type"] in FINISHING and not run["finished"]:
                run["finished"] = True
                run["finished_at"] = _iso_ms(rec["obj"].get("ts"))  # None: a ts that does not parse never expires
            if rec["type"] == "delivery.ack":
                run["acked"] = True
        expired = sorted(rid for rid, run in runs.items()
                         if run["finished"] and not run["acked"] and run["finished_at"] is not None
                         and run["finished_at"] < now_ms - delivery_window * 1000)  # TJ-RET-018

        def removable(rec):  # TJ-RET-013
            at = _iso_ms(rec["obj"].get("ts"))
            if at is None or at >= now_ms - window * 1000:
                return False
            rid = request_id(rec)
            if rid is None:
                return True
            return runs[rid]["finished"] and (runs[rid]["acked"] or rid in expired)

        cut = None
        parts = None  # a split checkpoint is cut at its first part once its last part follows (TJ-RET-020)
        blocked = False
        for rec in jf.records:
            kind = None if rec.get("unknown") else rec["type"]
            if kind == "checkpoint" and not blocked:
                cut = rec
            if kind == "checkpoint.part":
                payload, seq = rec["obj"]["payload"], rec["obj"]["seq"]
                if payload["part"] == 0 and not blocked:
                    parts = {"first": rec, "next": 0, "parts": payload["parts"], "seq": seq, "line": rec["line"]}
                if parts is not None and (payload["part"], payload["parts"], seq, rec["line"]) == (
                        parts["next"], parts["parts"], parts["seq"], parts["line"]):
                    parts.update(next=parts["next"] + 1, seq=seq + 1, line=rec["line"] + 1)
                    if parts["next"] == parts["parts"]:
                        # defect switch: TJ-RET-020 (cuts at the last part, dropping the others)
                        cut, parts = (rec if MUTANT == "compact-at-last-part" else parts["first"]), None
                else:
                    parts = None
            else:
                parts = None
            if not removable(rec):
                blocked = True
                if parts is None:
                    break
        with open(path, "rb") as f:
            data = f.read()
        lines = _lines(data)
        if cut is None or cut["line"] == 1:
            return {"removed_records": 0, "expired": expired}
        atomic_replace(path, b"".join(lines[cut["line"] - 1:]))
        return {"removed_records": cut["line"] - 1, "expired": expired}
    finally:
        release_lock(path, token)


# ---------------------------------------------------------------------------
# The store read (the adapter's `read` op)
# ---------------------------------------------------------------------------


def read_store(paths, mode="tolerant", do_audit=False):
    """Read files and directories; return the `read` result of the adapter protocol."""
    if mode not in ("tolerant", "prefix", "strict"):
        raise ValueError("unknown mode %r" % (mode,))
    findings = Findings()
    result = {"turns": {}, "findings": findings.items, "runs": {}, "event_logs": {}}
    if do_audit:
        result["plan"] = []
    try:
        files = discover(paths, findings)
        journals = []
        states = []
        for kind, path in files:
            if kind == "state":
                try:
                    obj = read_state(path, mode, findings)
                except StrictFailure:
                    obj = None  # the failure is the finding already recorded
                if obj is not None:
                    states.append((path, obj))
            else:
                journals.append(read_journal_file(path, mode, findings, stream=True))
        turn_files = [jf for jf in journals if jf.family == "turn"]
        if MUTANT == "audit-repairs-tail" and do_audit:  # defect switch: TJ-AUDIT-010 (an audit that repairs)
            for jf in turn_files:
                with open(jf.path, "rb+") as f:
                    data = f.read()
                    f.truncate(data.rfind(b"\n") + 1)
        derived, listed = derive_sessions(turn_files, findings)
        result["turns"] = {sid: {tid: t["state"] for tid, t in turns.items()}
                           for sid, turns in derived.items() if turns or sid in listed}
        runs_by_id = {}
        for jf in journals:
            if jf.family == "event":
                result["event_logs"][jf.path] = fold_event_log(jf, findings)
            elif jf.family == "run":
                run = fold_run(jf, findings)
                result["runs"][jf.path] = run["outcome"]
                if run["run_id"] is not None:
                    runs_by_id.setdefault(run["run_id"], []).append(run)
        for path, obj in states:  # TJ-STATE-006
            for run in runs_by_id.get(obj.get("run_id"), []):
                if run["max_request_seq"] is not None and run["max_request_seq"] > obj.get("invoke_seq", -1) \
                        and MUTANT != "no-stale-state":  # defect switch: TJ-STATE-006
                    findings.add("stale_state", path)
                    break
        if do_audit:
            result["plan"] = audit(derived, turn_files, findings)
    except StrictFailure as failure:
        result["strict_failure"] = failure.finding
    if MUTANT == "read-omits-event-logs":
        del result["event_logs"]  # defect switch: TJ-CONF-025 (a claimed family's states left out of the answer)
    return result


# ---------------------------------------------------------------------------
# Adapter protocol (spec §17.3)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Lifecycle (adapter.md §5.4): what the writers decide. Each request opens the file's writer (lock taken, torn tail
# repaired), reads what it needs back from the file, makes one call and closes it again.
# ---------------------------------------------------------------------------


def _now_iso():
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _with_writer(file, body):
    """Open ``file``'s writer, call ``body(writer, records)`` with the file's accepted records, close the writer."""
    writer = AppendFile(file, "every")
    try:
        existing = [rec["obj"] for rec in read_journal_file(file, "tolerant", Findings()).records
                    if not rec.get("unknown")]
        return body(writer, existing)
    finally:
        writer.close()


def _session_journal(root, sid):
    if not isinstance(root, str) or not os.path.isabs(root):
        raise BadRequest("root must be an absolute path")
    if not isinstance(sid, str) or not valid_identifier(sid):
        raise BadRequest("session id %r is not a valid identifier (TJ-FAM-010)" % (sid,))  # before any path is built
    return os.path.join(root, TURN_DIR, sid + ".jsonl")


def turn_submit(root, sid, tid, content):
    """A user turn's ``submitted``; a retry with the same content writes nothing (TJ-TURN-012), other content is
    refused (TJ-TURN-003)."""
    import time

    def body(writer, existing):
        earlier = next((r for r in existing if r.get("event") == "submitted" and r.get("turn_id") == tid), None)
        if earlier is not None:
            if earlier.get("content") == content:
                return {"created": False}
            raise WriterError("refused", "turn %s was submitted with other content (TJ-TURN-003)" % tid)
        writer.append({"version": 1, "event": "submitted", "turn_id": tid, "session_id": sid,
                       "created_at": time.time(), "role": "user", "content": content})
        return {"created": True}
    return _with_writer(_session_journal(root, sid), body)


def turn_event(root, sid, tid, event, reason):
    """A turn's next step: only one that raises its state, never after a terminal one (TJ-TURN-014)."""
    import time
    if event not in ("worker_started", "assistant_started", "completed", "interrupted"):
        raise BadRequest("event must be worker_started, assistant_started, completed or interrupted")

    def body(writer, existing):
        ranks = [RANK[r["event"]] for r in existing if r.get("turn_id") == tid and r.get("event") in RANK]
        current = max(ranks) if ranks else -1
        if current < 0 or current == 3 or RANK[event] <= current:
            raise WriterError("refused", "%s does not raise the state of turn %s (TJ-TURN-014)" % (event, tid))
        record = {"version": 1, "event": event, "turn_id": tid, "created_at": time.time()}
        if event == "interrupted":
            record["reason"] = reason if isinstance(reason, str) and reason else "error"
        writer.append(record)
        return {}
    return _with_writer(_session_journal(root, sid), body)


def _known_runs(existing):
    """Every run of the log, request id -> finished: the last checkpoint's run index (runs whose records compaction
    removed), then every record of the file (TJ-EVENT-017, TJ-EVENT-020: a whole scan, not the index alone)."""
    runs = {}
    checkpoints = [r for r in existing if r.get("type") == "checkpoint" or (  # or a split one's last part (TJ-EVENT-030)
        r.get("type") == "checkpoint.part" and isinstance(r.get("payload"), dict)
        and r["payload"].get("part") == r["payload"].get("parts", 0) - 1)]
    index = checkpoints[-1].get("payload", {}).get("runs") if checkpoints else None
    if isinstance(index, list):
        for entry in index:
            if isinstance(entry, dict) and isinstance(entry.get("request_id"), str):
                runs[entry["request_id"]] = entry.get("outcome") is not None
    for r in existing:
        payload = r.get("payload") if isinstance(r.get("payload"), dict) else {}
        rid = payload.get("request_id")
        if r.get("type") == "chat.started" and isinstance(rid, str):
            runs[rid] = runs.pop(rid, False)  # keeps start order: a run started later moves to the end
        elif r.get("type") in FINISHING and rid in runs:
            runs[rid] = True
    return runs


def event_append(file, rtype, payload):
    """An event-log record; the writer gives its seq, one more than the last (TJ-EVENT-003/004), and refuses a run
    while another is active (TJ-EVENT-009) or for a request id the log holds (TJ-EVENT-010, TJ-EVENT-017), and an ack
    through a record not yet written (TJ-EVENT-021)."""
    if not isinstance(file, str) or not os.path.isabs(file) or not isinstance(rtype, str) \
            or not isinstance(payload, dict):
        raise BadRequest("event_append needs file (an absolute path), type and payload (an object)")

    def body(writer, existing):
        seqs = [r["seq"] for r in existing if is_integer(r.get("seq"))]
        seq = max(seqs) + 1 if seqs else 0
        if rtype == "chat.started":
            runs = _known_runs(existing)
            if payload.get("request_id") in runs:
                raise WriterError("refused", "request %s already has a run (TJ-EVENT-010)" % payload.get("request_id"))
            if runs and not list(runs.values())[-1]:
                raise WriterError("refused", "a run is active (TJ-EVENT-009)")
        through = payload.get("through_seq")
        if rtype == "delivery.ack" and is_integer(through) and through >= seq:
            raise WriterError("refused", "through_seq %d is not below this ack's seq %d (TJ-EVENT-021)" % (through, seq))
        record = {"seq": seq, "ts": _now_iso(), "type": rtype, "payload": payload}
        writer.append(record)
        last = max((i for i, r in enumerate(existing) if r.get("type") == "checkpoint"), default=-1)
        # The count from the records already read; the file is read again only for the byte condition.
        if len(existing) - last >= CHECKPOINT_EVERY and _checkpoint_bytes_due(file):  # TJ-EVENT-006
            folded = fold_event_log(read_journal_file(file, "tolerant", Findings()), Findings())
            runs = _run_index(existing + [record])
            if MUTANT == "checkpoint-always-split":  # defect switch: TJ-EVENT-029 (splits a list that fits one line)
                head, tail = folded["messages"][:1], folded["messages"][1:]
                writer.append({"seq": seq + 1, "ts": _now_iso(), "type": "checkpoint.part",
                               "payload": {"part": 0, "parts": 2, "messages": head}})
                writer.append({"seq": seq + 2, "ts": _now_iso(), "type": "checkpoint.part",
                               "payload": {"part": 1, "parts": 2, "messages": tail, "runs": runs}})
                return {"seq": seq}
            writer.append({"seq": seq + 1, "ts": _now_iso(), "type": "checkpoint",
                           "payload": {"messages": folded["messages"],  # TJ-EVENT-007
                                       "runs": runs}})  # TJ-EVENT-019
        return {"seq": seq}
    return _with_writer(file, body)


CHECKPOINT_EVERY = 50


def _checkpoint_bytes_due(file):
    """TJ-EVENT-006's byte condition: at least as many bytes as the previous checkpoint's line follow it."""
    records = read_journal_file(file, "tolerant", Findings()).records
    last = max((i for i, r in enumerate(records) if r.get("type") == "checkpoint"), default=None)
    if last is None:
        return True
    line = len(records[last]["raw"]) + 1
    return os.path.getsize(file) - (records[last]["offset"] + line) >= line


def _run_index(records):
    """The run index of a checkpoint after ``records`` (spec §6.2): each run in start order with its first start, its
    first finish and the clients that acknowledged it."""
    outcomes = {"chat.done": "done", "chat.error": "error", "chat.cancelled": "cancelled"}
    runs = {}
    for r in records:
        payload = r.get("payload") if isinstance(r.get("payload"), dict) else {}
        rid = payload.get("request_id")
        if r.get("type") == "chat.started" and isinstance(rid, str) and rid not in runs:
            runs[rid] = {"request_id": rid, "started_seq": r["seq"], "started_ts": r["ts"], "outcome": None,
                         "finished_seq": None, "finished_ts": None, "acked": False, "acked_by": []}
        run = runs.get(rid)
        if run is None:
            continue
        if r.get("type") in outcomes and run["outcome"] is None:
            run.update(outcome=outcomes[r["type"]], finished_seq=r["seq"], finished_ts=r["ts"])
        if r.get("type") == "delivery.ack":
            run["acked"] = True
            client = payload.get("client_id")
            if isinstance(client, str) and client not in run["acked_by"]:
                run["acked_by"].append(client)
    return list(runs.values())


def run_step(request):
    """One record of a run: a header first in a new file and never again (TJ-RUN-003/004), agent events numbered
    from 0 (TJ-RUNSEM-010), model requests from 1, each response with its open request's seq (TJ-RUNSEM-011)."""
    file, run_id, started_at, step = (request.get(k) for k in ("file", "run_id", "started_at", "step"))
    if not isinstance(file, str) or not os.path.isabs(file) or not isinstance(run_id, str) \
            or not valid_identifier(run_id) or not isinstance(started_at, str):
        raise BadRequest("run_step needs file (an absolute path), run_id (an identifier) and started_at")

    def body(writer, existing):
        if not existing:
            writer.append({"type": "header", "schema_version": 1, "run_id": run_id, "started_at": started_at})
        base = {"run_id": run_id, "ts": _now_iso()}
        seqs = lambda t: [r["seq"] for r in existing if r.get("type") == t and is_integer(r.get("seq"))]
        if step == "start":
            writer.append(dict({"type": "run.start"}, **base, input=request.get("input")))
            return {}
        if step == "agent_event":
            done = seqs("agent.event")
            seq = max(done) + 1 if done else 0
            writer.append(dict({"type": "agent.event"}, **base, seq=seq, event=request.get("event")))
            return {"seq": seq}
        if step == "llm_request":
            done = seqs("llm.request")
            seq = max(done) + 1 if done else 1
            writer.append(dict({"type": "llm.request"}, **base, seq=seq, input=request.get("input")))
            return {"seq": seq}
        if step == "llm_response":
            seq = request.get("seq")
            if seq not in seqs("llm.request") or seq in seqs("llm.response"):
                raise WriterError("refused", "no open llm.request with seq %r (TJ-RUNSEM-005)" % (seq,))
            writer.append(dict({"type": "llm.response"}, **base, seq=seq, output=request.get("output")))
            return {}
        if step == "end":
            writer.append(dict({"type": "run.end"}, **base, outcome=request.get("outcome", "completed")))
            return {}
        raise BadRequest("step must be start, agent_event, llm_request, llm_response or end")
    return _with_writer(file, body)


def state_write(root, sid, messages):
    """Replace the session's state document atomically (TJ-STATE-005, TJ-DUR-009)."""
    if not isinstance(root, str) or not os.path.isabs(root) or not isinstance(sid, str) or not valid_identifier(sid):
        raise BadRequest("state_write needs root (an absolute path) and session_id (an identifier)")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and isinstance(m.get("role"), str)
                                                 for m in messages):
        raise BadRequest("messages must be a list of objects with a string role")
    path = os.path.join(root, "sessions", "state", sid + ".json")
    make_dirs(os.path.dirname(path))
    document = {"schema_version": 1, "session_id": sid, "updated_at": _now_iso(), "messages": messages}
    atomic_replace(path, json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii"))
    return {}


def capabilities():
    return {
        "name": NAME,
        "version": VERSION,
        "language": "python",
        "protocol": PROTOCOL,
        **({} if MUTANT == "no-levels-claim" else {"levels": ["reader", "writer"]}),  # defect switch: TJ-CONF-001
        "families": ["turn", "event", "run", "state"],
        # group is served by one fdatasync per record: each append is acknowledged after a sync covering it.
        "durability": {"no-every-claim": ["group", "none"], "no-durability-claim": []}.get(
            MUTANT, ["every", "group", "none"]),  # defect switches: TJ-DUR-011, TJ-DUR-013
        "features": ["audit", "replay", "lifecycle", "recovery", "retention"],
    }


class BadRequest(Exception):
    pass


WRITERS = {}
_next_handle = [1]


def close_all():
    for handle_id in list(WRITERS):
        writer = WRITERS.pop(handle_id)
        try:
            writer.close()
        except OSError as e:
            print("adapter: closing %s: %s" % (writer.file, e), file=sys.stderr)


def handle(request):
    op = request.get("op")
    if op == "open":
        file, durability = request.get("file"), request.get("durability")
        if not isinstance(file, str) or not os.path.isabs(file):
            raise BadRequest("open needs file, an absolute path")
        if durability not in ("every", "group", "none"):
            raise BadRequest("durability must be every, group or none")
        writer = AppendFile(file, durability)
        handle_id = "h%d" % _next_handle[0]
        _next_handle[0] += 1
        WRITERS[handle_id] = writer
        return {"handle": handle_id}
    if op in ("append", "close"):
        writer = WRITERS.get(request.get("handle"))
        if writer is None:
            raise BadRequest("no open handle %r" % (request.get("handle"),))
        if op == "append":
            writer.append(request.get("record"))
        else:
            del WRITERS[request.get("handle")]
            writer.close()
        return {}
    if op == "start":
        if request.get("protocol") != PROTOCOL:
            raise BadRequest("protocol %r is not supported; this adapter speaks %d"
                             % (request.get("protocol"), PROTOCOL))
        return capabilities()
    if op == "read":
        if MUTANT == "strict-requests" and set(request) - {"id", "op", "paths", "mode", "audit", "max_line_bytes"}:
            raise BadRequest("unknown members in read")  # defect switch: TJ-CONF-021
        paths = request.get("paths")
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and os.path.isabs(p)
                                                                for p in paths):
            raise BadRequest("read needs paths: a non-empty array of absolute paths")
        mode = request.get("mode", "prefix" if MUTANT == "default-prefix" else "tolerant")  # switch: TJ-FRAME-020
        if mode not in ("tolerant", "prefix", "strict") or (MUTANT == "no-strict-mode" and mode == "strict"):
            raise BadRequest("mode must be tolerant, prefix or strict")  # defect switch above: TJ-FRAME-019
        for p in paths:
            if not os.path.exists(p):
                raise BadRequest("no such file or directory: " + p)
        limit = request.get("max_line_bytes", LINE_LIMIT)
        if not is_integer(limit) or limit < 1:
            raise BadRequest("max_line_bytes must be an integer >= 1")
        READ_LIMIT[0] = int(limit)
        try:
            result = read_store(paths, mode, request.get("audit") is True)
        finally:
            READ_LIMIT[0] = LINE_LIMIT
        result["findings"] = [
            {k: v for k, v in f.items() if k in ("code", "file", "line", "turn_id")} for f in result["findings"]
        ]
        result.pop("strict_failure", None)
        if request.get("audit") is not True:
            result.pop("plan", None)
        return result
    if op == "replay":
        path, after = request.get("file"), request.get("after")
        if not isinstance(path, str) or not os.path.isabs(path) or not is_integer(after) or after < -1:
            raise BadRequest("replay needs file (an absolute path) and after (an integer >= -1)")
        if not os.path.isfile(path):
            raise BadRequest("no such file: " + path)
        try:
            return replay(path, int(after))
        except ValueError as e:
            raise BadRequest(str(e))
    if op == "turn_submit":
        return turn_submit(request.get("root"), request.get("session_id"), request.get("turn_id"),
                           request.get("content"))
    if op == "turn_event":
        return turn_event(request.get("root"), request.get("session_id"), request.get("turn_id"),
                          request.get("event"), request.get("reason"))
    if op == "event_append":
        return event_append(request.get("file"), request.get("type"), request.get("payload"))
    if op == "run_step":
        return run_step(request)
    if op == "state_write":
        return state_write(request.get("root"), request.get("session_id"), request.get("messages"))
    if op == "recover":
        root = request.get("root")
        if not isinstance(root, str) or not os.path.isabs(root):
            raise BadRequest("recover needs root, an absolute path")
        return {"recovered": recover_store(root)}
    if op == "sweep":
        root, now, window = request.get("root"), request.get("now"), request.get("window_s")
        if not isinstance(root, str) or not os.path.isabs(root) or not is_integer(now) \
                or (window is not None and not isinstance(window, (int, float))):
            raise BadRequest("sweep needs root (an absolute path), now (epoch ms) and an optional window_s")
        return {"sessions": sweep_store(root, now, window)}
    if op == "compact":
        path, now = request.get("file"), request.get("now")
        window, delivery = request.get("window_s"), request.get("delivery_window_s")
        if not isinstance(path, str) or not os.path.isabs(path) or not is_integer(now):
            raise BadRequest("compact needs file (an absolute path) and now (epoch ms)")
        if not os.path.isfile(path):
            raise BadRequest("no such file: " + path)
        return compact_event_log(path, now, window, delivery)
    if op == "stop":
        close_all()
        return {}
    if MUTANT == "exit-on-unknown-op":
        sys.exit(3)  # defect switch: TJ-CONF-015
    raise Unsupported("op %r is not supported by this adapter" % (op,))


class Unsupported(Exception):
    pass


def serve(stdin=None, stdout=None):
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout
    # Nothing but responses may reach stdout (TJ-CONF-012): a stray print goes to stderr instead.
    sys.stdout = sys.stderr
    if MUTANT == "banner-on-stdout":
        stdout.write("turnjournal python adapter ready\n")  # defect switch: TJ-CONF-012
        stdout.flush()
    lines = iter(stdin.readline, b"")
    if MUTANT == "first-line-per-read":  # defect switch: TJ-CONF-020 (requests that came in one read are dropped)
        lines = (chunk.split(b"\n", 1)[0] + b"\n" for chunk in iter(lambda: os.read(stdin.fileno(), 65536), b""))
    for raw in lines:
        if not raw.strip():
            continue
        try:
            request = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            # No id to answer with: say so on stderr and read on.
            print("adapter: ignoring a line that is not JSON (%s): %r" % (e, raw[:200]), file=sys.stderr)
            continue
        request_id = 0
        op = None
        try:
            if not isinstance(request, dict):
                raise BadRequest("request is not a JSON object")
            if is_integer(request.get("id")):
                request_id = int(request["id"])
            else:
                raise BadRequest("request has no integer id")
            op = request.get("op")
            result = handle(request)
            response = {"id": str(request_id) if MUTANT == "string-ids" else request_id,  # switch: TJ-CONF-019
                        "ok": True, "result": result}
        except Unsupported as e:
            response = {"id": request_id, "ok": False, "error": {"code": "unsupported", "message": str(e)}}
        except BadRequest as e:
            response = {"id": request_id, "ok": False, "error": {"code": "bad_request", "message": str(e)}}
        except WriterError as e:
            print("adapter: %s: %s" % (op, e), file=sys.stderr)
            response = {"id": request_id, "ok": False, "error": {"code": e.code, "message": str(e)}}
        except Exception as e:  # never exit on a request (TJ-CONF-015)
            print("adapter: %s: %r" % (type(e).__name__, e), file=sys.stderr)
            response = {"id": request_id, "ok": False, "error": {"code": "failed", "message": repr(e)}}
        # Compact, like the records: the harness's strace check looks for `"id":<n>` in the acknowledgement.
        stdout.write(json.dumps(response, ensure_ascii=True, allow_nan=False, separators=(",", ":"),
                                indent=1 if MUTANT == "pretty-responses" else None) + "\n")  # switch: TJ-CONF-018
        stdout.flush()
        if op == "stop" and response["ok"]:
            return 1 if MUTANT == "stop-exit-1" else 0  # defect switch: TJ-CONF-023
    close_all()  # end of input: close every file (fsync, release locks)
    return 0


def main(argv):
    global SCHEMA_PATH
    import argparse

    parser = argparse.ArgumentParser(description="turnjournal v1 adapter (spec/v1/adapter.md) on stdin/stdout")
    parser.add_argument("--schema", help="path of schema.json (default: $TJ_SCHEMA, beside this file, the checkout)")
    args = parser.parse_args(argv)
    try:
        SCHEMA_PATH = locate_schema(args.schema)
        schema()
    except (SchemaNotFound, OSError, ValueError) as e:
        print("adapter.py: %s" % e, file=sys.stderr)
        return 2
    return serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
