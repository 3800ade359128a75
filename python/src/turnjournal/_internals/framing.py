"""Framing of one JSONL file (spec §3): LF-only lines, torn tails, salvage, damage."""

import json
import re

from . import defects
from .records import StrictFailure
from .schema import BOM, CHUNK, JSON_WS, READ_LIMIT


# ---------------------------------------------------------------------------
# Framing (spec §3)
# ---------------------------------------------------------------------------


def _parse_object(data):
    """bytes -> dict, or None when not valid UTF-8 / not JSON / not an object."""
    try:
        text = data.decode("utf-8", "replace" if defects.MUTANT == "utf8-replace" else "strict")  # switch: TJ-FRAME-015
    except UnicodeDecodeError:
        return None
    try:
        value = json.loads(text, parse_constant=_reject_constant,  # defect switch below: TJ-FRAME-011
                           object_pairs_hook=(lambda pairs: dict(reversed(pairs))) if defects.MUTANT == "dup-member-first" else None)
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
                    if len(buf) > READ_LIMIT[0] and (defects.MUTANT != "limit-in-characters"  # switch: TJ-FRAME-031
                                                     or len(bytes(buf).decode("utf-8", "ignore")) > READ_LIMIT[0]):
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
    if defects.MUTANT != "space-as-torn-tail":  # defect switch: TJ-FRAME-036 (the space reported as a torn tail)
        rest -= nuls
    if rest > 0 and defects.MUTANT == "torn-as-line" and not skipping:
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
        if "separator" not in seen and (b"\xe2\x80\xa8" in data or (b"\xe2\x80\xa9" in data and defects.MUTANT
                                                                   != "separator-2028-only")):  # switch: TJ-FAM-026
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
            if defects.MUTANT == "torn-zeros-zero-filled":
                with open(path, "rb") as f:
                    f.seek(item[1])
                    if b"\x00" in f.read(item[2]):
                        findings.add("zero_filled_region", path, offset=item[1])  # defect switch: TJ-FRAME-030
                        continue
            f = findings.add("torn_tail", path, offset=item[1], length=item[2])  # TJ-FRAME-004
            if defects.MUTANT == "torn-checkpoint-used":  # defect switch: TJ-REPLAY-006 (a backward scan that trusts the tail)
                with open(path, "rb") as tail:
                    tail.seek(item[1])
                    raw = tail.read(item[2])
                try:
                    obj = json.loads(raw.decode("utf-8"))
                except ValueError:
                    obj = None
                if isinstance(obj, dict) and obj.get("type") == "checkpoint":
                    on_record(obj, 0, item[1], raw)
            if defects.MUTANT == "torn-is-damage" and mode == "strict":
                raise StrictFailure(f)  # defect switch: TJ-FRAME-024
            if defects.MUTANT == "torn-is-damage" and mode == "prefix":
                return False  # defect switch: TJ-FRAME-024
            continue
        _, line_no, offset, data, length = item
        if defects.MUTANT == "offset-index":  # defect switch: TJ-FRAME-033 (every line's offset kept for the read)
            findings.line_offsets.append(offset)
        if data is None:
            f = findings.add("malformed_line" if defects.MUTANT == "oversized-as-malformed" else "oversized_line",  # TJ-FRAME-032
                             path, line_no, offset, length=length)
            if mode == "strict":
                raise StrictFailure(f)
            if mode == "prefix":
                return False
            continue
        check_violations(line_no, offset, data)
        start = 0
        if line_no == 1 and data.startswith(BOM) and defects.MUTANT != "no-bom-skip":  # TJ-FRAME-012 (switch)
            start = 3
        if data.endswith(b"\r"):  # TJ-FRAME-013: one CR before LF
            if defects.MUTANT == "crlf-is-damage":
                findings.add("malformed_line", path, line_no, offset)  # defect switch: TJ-FRAME-013
                continue
            data = data[:-1]
        body = data[start:]
        if body.strip(JSON_WS) == b"" and defects.MUTANT != "blank-is-damage":  # TJ-FRAME-014 (switch)
            findings.add("blank_line", path, line_no, offset)
            continue
        nul = body.find(b"\x00")
        if nul >= 0 and defects.MUTANT != "nul-not-damage":  # TJ-FRAME-028 (switch)
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
        if obj is not None and defects.MUTANT == "split-u2028" and "\u2028" in body.decode("utf-8"):
            obj = None  # defect switch: TJ-FRAME-001 (a reader that also breaks lines at U+2028)
        if obj is not None:
            on_record(obj, line_no, offset, body)
            continue
        # Damage (TJ-FRAME-015); salvage only in tolerant mode (§3.5).
        if mode == "tolerant" and defects.MUTANT != "no-salvage":  # defect switch: TJ-FRAME-026
            p, obj = _salvage(body, 1)
            if obj is not None:
                head = _parse_object(body[:p]) if defects.MUTANT == "salvage-head-too" else None
                if head is not None:
                    on_record(head, line_no, offset, body[:p])  # defect switch: TJ-FRAME-027
                findings.add("glued_record", path, line_no, offset, head_length=p)  # TJ-FRAME-026
                on_record(obj, line_no, offset, body[p:])
                continue
        f = findings.add("malformed_line", path, line_no, offset)
        if defects.MUTANT == "damage-raises":
            raise ValueError("malformed line %d of %s" % (line_no, path))  # defect switch: TJ-FRAME-018
        if mode == "strict" and defects.MUTANT != "strict-reads-on":  # defect switch: TJ-FRAME-022
            raise StrictFailure(f)
        if mode == "prefix" and defects.MUTANT != "prefix-reads-on":  # defect switch: TJ-FRAME-021
            return False
    return True
