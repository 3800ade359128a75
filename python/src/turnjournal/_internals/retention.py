"""Retention (spec §14): the sweep of turn journals and event-log compaction."""

import datetime
import os

from . import defects
from .derive import turn_session_id
from .errors import BadRequest
from .foreign_lock import foreign_writers_excluded
from .journal_file import read_journal_file
from .liveness import held_by_live_writer
from .records import FINISHING, Findings
from .recovery import INFO_CODES, TURN_DIR, _turn_store
from .schema import CHUNK
from .writer import acquire_lock, atomic_replace, encode_record, release_lock


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


def compact_event_log(path, now_ms, window_s=None, delivery_window_s=None, lock_held=False):
    """Compaction of an event log (spec §14.2): cut at the latest valid checkpoint C with only removable records before
    it, keep C and the rest byte for byte (TJ-RET-012, TJ-RET-014). ``lock_held``: the caller holds the file's lock
    (an open EventLog), so it is not taken here. Foreign writers: gptme's flock is held from the read to the rename
    (TJ-DUR-050), and a file that changed meanwhile anyway (a writer with no lock at all) is left as it is, the result
    saying so in ``skipped`` (TJ-DUR-051)."""
    token = None if lock_held else acquire_lock(path)
    try:
        with foreign_writers_excluded(path):  # TJ-DUR-050
            return _compact_locked(path, now_ms, window_s, delivery_window_s)
    finally:
        if token is not None:
            release_lock(path, token)


def _compact_locked(path, now_ms, window_s, delivery_window_s):
    window = 48 * 3600 if window_s is None else window_s
    delivery_window = 48 * 3600 if delivery_window_s is None else delivery_window_s  # TJ-LIVE-015
    read_as = _identity(path)
    findings = Findings()
    jf = read_journal_file(path, "tolerant", findings)
    if jf.family != "event":
        raise BadRequest("not an event log: " + path)
    def request_id(rec):
        payload = rec["obj"].get("payload")
        rid = payload.get("request_id") if isinstance(payload, dict) else None
        return rid if isinstance(rid, str) and not rec.get("unknown") else None

    # TJ-RET-019: a ts more than 5 minutes ahead of now was written by a clock that was ahead; the log is appended in
    # time order, so the record counts as written when the first later record with a plausible ts was (or now).
    time_of = {}
    later = now_ms
    for rec in reversed(jf.records):
        at = _iso_ms(rec["obj"].get("ts"))
        ahead = at is not None and at > now_ms + 5 * 60_000
        time_of[id(rec)] = later if ahead else at
        if at is not None and not ahead:
            later = at

    runs = {}  # request id -> {"finished": bool, "finished_at": epoch ms of the first finishing record, "acked"}
    for rec in jf.records:
        rid = request_id(rec)
        if rid is None:
            continue
        run = runs.setdefault(rid, {"finished": False, "finished_at": None, "acked": False})
        if rec["type"] in FINISHING and not run["finished"]:
            run["finished"] = True
            run["finished_at"] = time_of[id(rec)]  # None: a ts that does not parse never expires
        if rec["type"] == "delivery.ack":
            run["acked"] = True
    expired = sorted(rid for rid, run in runs.items()
                     if run["finished"] and not run["acked"] and run["finished_at"] is not None
                     and run["finished_at"] < now_ms - delivery_window * 1000)  # TJ-RET-018

    def removable(rec):  # TJ-RET-013
        at = time_of[id(rec)]
        if at is None or at >= now_ms - window * 1000:
            return False
        rid = request_id(rec)
        if rid is None:
            return True
        return runs[rid]["finished"] and (runs[rid]["acked"] or rid in expired)

    cut = None
    parts = None  # a split checkpoint is cut at its first part once its last part follows (TJ-RET-021)
    blocked = False  # a record before it that is not removable: no later first part can be the cut
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
                    # defect switch: TJ-RET-021 (cuts at the last part, dropping the others)
                    cut, parts = (rec if defects.MUTANT == "compact-at-last-part" else parts["first"]), None
            else:
                parts = None
        else:
            parts = None
        if not removable(rec):
            blocked = True
            if parts is None:  # the parts of a set begun before it may still complete it
                break
    with open(path, "rb") as f:
        data = f.read()
    lines = _lines(data)
    if cut is None or cut["line"] == 1:
        return {"removed_records": 0, "expired": expired}
    if not atomic_replace(path, b"".join(lines[cut["line"] - 1:]), lambda: _identity(path) == read_as):  # TJ-DUR-051
        return {"removed_records": 0, "expired": expired,
                "skipped": "the file changed while it was compacted (a writer that takes neither lock appended): "
                           "left as it was; compact it again"}
    return {"removed_records": cut["line"] - 1, "expired": expired}
