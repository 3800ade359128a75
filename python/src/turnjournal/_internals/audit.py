"""The audit of turn journals and the recovery plan (spec §12, §13.2)."""

import json
import os
import socket

from . import defects
from .liveness import held_by_live_writer


def audit(derived, turn_files, findings):
    plan = []
    live = {jf.path: held_by_live_writer(jf.path) for jf in turn_files}
    if defects.MUTANT == "plan-takes-locks":  # defect switch: TJ-RECOV-001 (the plan probes by locking, and keeps the locks)
        for jf in turn_files:
            if not live[jf.path]:
                with open(jf.path + ".lock", "w") as f:
                    f.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "token": "plan"}))
    for jf in turn_files:
        for line in sorted(set(jf.damage_lines)) if defects.MUTANT != "no-malformed-event-finding" else ():  # TJ-AUDIT-009
            findings.add("turn_journal_malformed_event", jf.path, line, jf.damage_offsets.get(line))  # TJ-AUDIT-009
    for sid in sorted(derived):
        for tid in sorted(derived[sid]):
            turn = derived[sid][tid]
            if turn["state"] == "interrupted" and defects.MUTANT != "no-interrupted-finding":  # switch: TJ-AUDIT-008
                findings.add("turn_journal_interrupted_turn", turn["file"], turn_id=tid)  # TJ-AUDIT-008
            if turn["state"] in ("completed", "interrupted"):
                continue
            abandoned = defects.MUTANT == "plan-ignores-locks" or not any(live.get(p) for p in turn["files"])  # TJ-RECOV-002
            if defects.MUTANT != "no-pending-finding":  # defect switch: TJ-AUDIT-007
                findings.add("turn_journal_pending_turn", turn["file"], turn_id=tid,
                         severity="warn" if abandoned else "info", repairable=abandoned)  # TJ-AUDIT-007
            if abandoned:
                actions = [] if turn["orphan"] or defects.MUTANT == "plan-no-user-message" else ["ensure_user_message"]
                actions += ["ensure_interruption_marker", "append_interrupted"]
                plan.append({"session_id": sid, "turn_id": tid, "actions": actions})
    return plan
