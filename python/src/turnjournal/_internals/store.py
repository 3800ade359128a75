"""The store read: every file of the given paths read, folded and audited; replay (spec §15.4)."""

from . import defects
from .audit import audit
from .derive import derive_sessions
from .discovery import discover
from .event_fold import fold_event_log
from .journal_file import read_journal_file
from .records import Findings, StrictFailure
from .run_fold import fold_run
from .schema import is_integer
from .state import read_state


# ---------------------------------------------------------------------------
# The store read (the adapter's `read` op)
# ---------------------------------------------------------------------------


def read_store(paths, mode="tolerant", do_audit=False, representatives=False):
    """Read files and directories; return the `read` result of the adapter protocol (with ``representatives``, each
    turn's representative record of every event name, TJ-DERIVE-013)."""
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
        if defects.MUTANT == "audit-repairs-tail" and do_audit:  # defect switch: TJ-AUDIT-010 (an audit that repairs)
            for jf in turn_files:
                with open(jf.path, "rb+") as f:
                    data = f.read()
                    f.truncate(data.rfind(b"\n") + 1)
        derived, listed = derive_sessions(turn_files, findings)
        result["turns"] = {sid: {tid: t["state"] for tid, t in turns.items()}
                           for sid, turns in derived.items() if turns or sid in listed}
        if representatives:
            result["representatives"] = {sid: {tid: dict(t["records"]) for tid, t in turns.items()}
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
                        and defects.MUTANT != "no-stale-state":  # defect switch: TJ-STATE-006
                    findings.add("stale_state", path)
                    break
        if do_audit:
            result["plan"] = audit(derived, turn_files, findings)
    except StrictFailure as failure:
        result["strict_failure"] = failure.finding
    if defects.MUTANT == "read-omits-event-logs":
        del result["event_logs"]  # defect switch: TJ-CONF-025 (a claimed family's states left out of the answer)
    return result


NO_EPOCH = object()  # a replay request without ``epoch``: a client that predates epochs


def replay(path, after, epoch=NO_EPOCH):
    """Spec §15.4: the seqs a client holding every record up to ``after`` of the log whose epoch was ``epoch``
    receives, or why it gets a snapshot."""
    if not is_integer(after) or after < -1:
        raise ValueError("after must be an integer >= -1")
    if epoch is not NO_EPOCH and epoch is not None and not isinstance(epoch, str):
        raise ValueError("epoch must be a string or null")
    findings = Findings()
    jf = read_journal_file(path, "tolerant", findings)
    if jf.family != "event":
        raise ValueError("not an event log: " + path)
    state = fold_event_log(jf, findings)
    last = state["last_seq"]
    first = jf.accepted_seqs[0] if jf.accepted_seqs else None
    if epoch is not NO_EPOCH and after >= 0 and epoch != state["epoch"] and defects.MUTANT != "replay-epoch-ignored":
        return {"reason": "reset"}  # TJ-REPLAY-018 (defect switch: replay-epoch-ignored)
    if after > (last if last is not None else -1) and defects.MUTANT != "replay-no-ahead":  # defect switch: TJ-REPLAY-014
        return {"reason": "ahead"}  # TJ-REPLAY-014
    if first is not None and after + 1 < first and defects.MUTANT != "replay-no-compacted":  # switch: TJ-REPLAY-013
        return {"reason": "compacted"}  # TJ-REPLAY-013
    if defects.MUTANT == "replay-inclusive":
        return {"seqs": [seq for seq in jf.accepted_seqs if seq >= after]}  # defect switch: TJ-REPLAY-012
    return {"seqs": [seq for seq in jf.accepted_seqs if seq > after]}  # TJ-REPLAY-012
