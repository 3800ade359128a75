"""Turn derivation (spec §10): the order-independent fold of a session's shards."""

import json
import os

from . import defects
from .records import EXTENSION, RANK, valid_identifier
from .schema import is_number


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
    if defects.MUTANT == "recursive-canonical":
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
    return name if defects.MUTANT == "shard-own-session" else name.split("~", 1)[0]  # defect switch: TJ-FAM-016


def derive_sessions(turn_files, findings):
    """Group turn files into sessions (TJ-FAM-016) and fold each (§10.2). Returns {sid: {tid: turn}}."""
    sessions = {}
    for jf in turn_files:
        sid = turn_session_id(jf.path)
        if defects.MUTANT == "session-from-records":  # defect switch: TJ-FAM-017 (the records' session id over the name)
            sid = next((r["obj"]["session_id"] for r in jf.records if r.get("type") == "submitted"
                        and isinstance(r["obj"].get("session_id"), str)), sid)
        if defects.MUTANT == "first-shard-only" and sid in sessions:
            continue  # defect switch: TJ-DERIVE-004
        if not valid_identifier(sid) and defects.MUTANT != "no-invalid-session-id":  # defect switch: TJ-FAM-012
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
                elif rsid != sid and defects.MUTANT != "no-session-mismatch":  # defect switch: TJ-FAM-018
                    findings.add("session_mismatch", jf.path, rec["line"], rec["offset"])  # TJ-FAM-018
            if rec.get("unknown") and defects.MUTANT == "extension-event-counts" and EXTENSION.match(rec["type"]) \
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
    if defects.MUTANT != "removed-turns-kept":  # defect switch: TJ-DERIVE-006
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
            if defects.MUTANT == "terminal-member-decides" and isinstance(rec["obj"].get("terminal"), bool):
                terminal = rec["obj"]["terminal"]  # defect switch: TJ-TURN-010
            if terminal:
                terminal_seen.add(tid)
            elif tid in terminal_seen and defects.MUTANT != "no-event-after-terminal":  # defect switch: TJ-DERIVE-009
                findings.add("event_after_terminal", jf.path, rec["line"], rec["offset"], turn_id=tid)

    turns = {}
    for jf, rec in items:
        tid = rec["obj"]["turn_id"]
        turn = turns.setdefault(tid, {"events": {}, "files": [], "seen": {}})
        if jf.path not in turn["files"]:
            turn["files"].append(jf.path)
        same_name = turn["events"].setdefault(rec["type"], [])
        # Records of different event names are never equal, so the canonical text (costly) is computed only when a
        # turn has a second record of one name: most journals never need it.
        if same_name:
            seen = turn["seen"].get(rec["type"])
            if seen is None:
                seen = turn["seen"][rec["type"]] = {canonical(r[2]["obj"]) for r in same_name}
            key = canonical(rec["obj"])
            if key in seen and defects.MUTANT != "no-dedupe":  # defect switch: TJ-DERIVE-011
                findings.add("duplicate_event", jf.path, rec["line"], rec["offset"], turn_id=tid)  # TJ-DERIVE-011
                continue
            seen.add(key)
        if same_name and defects.MUTANT != "no-conflicting-duplicate":  # defect switch: TJ-DERIVE-013
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
            if defects.MUTANT == "first-record-represents":
                reps[name] = recs[0]  # defect switch: TJ-DERIVE-013 (the first record read, not the smallest)
        rank = max(RANK[name] for name in events)
        if defects.MUTANT == "last-event-wins":  # defect switch: TJ-DERIVE-001, TJ-DERIVE-002
            last = max((r for recs in events.values() for r in recs), key=lambda r: (r[1], r[2]["line"]))
            rank = RANK[last[2]["type"]]
        if rank < 3:
            state = [n for n in events if RANK[n] == rank][0]
        else:
            state = "completed" if "completed" in events and not (
                defects.MUTANT == "interrupted-wins" and "interrupted" in events) else "interrupted"  # switch: TJ-DERIVE-010
            if "completed" in events and "interrupted" in events:
                findings.add("terminal_conflict", turn_id=tid)  # TJ-DERIVE-010: a session-level finding
        orphan = "submitted" not in events
        first_file = reps["submitted"][1] if not orphan else turn["files"][0]
        if orphan and defects.MUTANT != "no-orphan-finding":  # defect switch: TJ-DERIVE-012
            findings.add("orphan_turn", turn_id=tid)  # TJ-DERIVE-012: a session-level finding
        out[tid] = {"turn_id": tid, "session_id": sid, "state": state, "orphan": orphan,
                    "file": first_file, "files": list(turn["files"]),
                    "records": {name: rep[2]["obj"] for name, rep in reps.items()}}  # representatives, for reports
    return out
