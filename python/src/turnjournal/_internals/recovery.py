"""Startup recovery of turn journals (spec §12)."""

import os
import time

from .derive import derive_sessions
from .journal_file import read_journal_file
from .liveness import held_by_live_writer
from .records import Findings
from .writer import AppendFile


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
