"""The fold of a run file (spec §7, §16)."""

import os

from . import defects
from .discovery import layout_hint
from .records import valid_identifier


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
        self.session_id = None  # the header's, for reports
        self.last_status = None
        self.agent_events = 0

    def feed(self, rec):
        path, findings = self.path, self.findings
        obj, t = rec["obj"], rec["type"]
        self.fed += 1
        if self.fed == 1:
            if t != "header" and defects.MUTANT != "no-missing-header":  # defect switch: TJ-RUN-005
                findings.add("missing_header", path, rec["line"], rec["offset"])  # TJ-RUN-005
            self.run_id = obj.get("run_id")
            if t == "header" and isinstance(obj.get("session_id"), str):
                self.session_id = obj["session_id"]
            if isinstance(self.run_id, str) and not valid_identifier(self.run_id):
                findings.add("invalid_run_id", path)  # TJ-FAM-013
            if t == "header":
                return
        where = (rec["line"], rec["offset"])
        if self.outcome is not None:
            # TJ-RUNSEM-002: reported, and (like the reference reader) ignored for everything else too.
            if defects.MUTANT != "no-record-after-run-end":  # defect switch: TJ-RUNSEM-002
                findings.add("record_after_run_end", path, *where)
            return
        if obj.get("run_id") != self.run_id and defects.MUTANT != "no-run-id-mismatch":  # defect switch: TJ-FAM-019
            findings.add("run_id_mismatch", path, *where)  # TJ-FAM-019
        if rec.get("unknown"):
            return
        calls = self.calls
        if t == "run.end":
            outcome = obj["outcome"]  # TJ-RUNSEM-001, TJ-COMPAT-010: carried unchanged
            if defects.MUTANT == "outcome-normalised" and outcome not in ("completed", "error", "cancelled", "interrupted"):
                outcome = "error"  # defect switch: TJ-COMPAT-010
            self.outcome = outcome
        elif t == "llm.request":
            if defects.MUTANT == "llm-seq-from-zero" and not calls and obj["seq"] > 1:
                findings.add("seq_gap", path, *where)  # defect switch: TJ-RUNSEM-009
            key = ("n", self.ordinal) if defects.MUTANT == "pair-by-order" else obj["seq"]  # defect switch: TJ-RUNSEM-003
            call = calls.setdefault(key, {"requests": [], "responses": []})
            if call["requests"] and defects.MUTANT != "no-llm-seq-duplicate":  # defect switch: TJ-RUNSEM-006
                findings.add("seq_duplicate", path, *where)  # TJ-RUNSEM-006
            call["requests"].append((where, self.ordinal))
            self.ordinal += 1
        elif t == "llm.response":
            key = ("n", sum(len(c["responses"]) for c in calls.values())) if defects.MUTANT == "pair-by-order" else obj["seq"]
            calls.setdefault(key, {"requests": [], "responses": []})["responses"].append(where)
        elif t == "run.status":
            self.last_status = obj.get("status")
        if t == "agent.event":
            self.agent_events += 1
            last = self.last_agent_seq
            if defects.MUTANT == "agent-gap-reported" and last is not None and obj["seq"] > last + 1:
                findings.add("seq_gap", path, *where)  # defect switch: TJ-RUNSEM-008
            if last is not None and obj["seq"] <= last and defects.MUTANT != "no-agent-regression":
                findings.add("agent_event_seq_regression", path, *where)  # TJ-RUNSEM-007
            self.last_agent_seq = obj["seq"]

    def finish(self):
        """The run's outcome once every record was fed; reports what only the whole file shows."""
        path, findings, outcome = self.path, self.findings, self.outcome
        if layout_hint(path) == "run":
            rid = os.path.basename(path)[: -len(".jsonl")]
            if not valid_identifier(rid) and defects.MUTANT != "no-invalid-run-id":  # defect switch: TJ-FAM-013
                findings.add("invalid_run_id", path)  # TJ-FAM-013
        # TJ-RUNSEM-003..005: requests and responses of one seq pair off one to one, in file order.
        for call in self.calls.values():
            for where, n in call["requests"][len(call["responses"]):]:
                if outcome is None and n == self.ordinal - 1:
                    continue  # the last request of a cut-off run (TJ-RUNSEM-004)
                if defects.MUTANT != "no-unpaired-request":  # defect switch: TJ-RUNSEM-004
                    findings.add("unpaired_llm_request", path, *where)
            for where in call["responses"][len(call["requests"]):]:
                if defects.MUTANT != "no-unpaired-response":  # defect switch: TJ-RUNSEM-005
                    findings.add("unpaired_llm_response", path, *where)
        max_request = max((seq for seq, call in self.calls.items() if call["requests"] and not isinstance(seq, tuple)),
                          default=None)
        unfinished = "cancelled" if defects.MUTANT == "no-end-means-cancelled" else "incomplete"  # switch: TJ-RECOV-012
        return {"run_id": self.run_id, "outcome": outcome if outcome is not None else unfinished,
                "max_request_seq": max_request, "session_id": self.session_id, "last_status": self.last_status,
                "llm_calls": sum(1 for call in self.calls.values() if call["requests"]),
                "agent_events": self.agent_events}


def fold_run(jf, findings):
    """The outcome of a run file: its streaming fold when the read folded it, else the fold of its kept records."""
    fold = jf.fold
    if fold is None:
        fold = RunFold(jf.path, findings)
        for rec in jf.records:
            fold.feed(rec)
    return fold.finish()
