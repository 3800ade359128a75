"""Reading a store and its report: the JSON the ``check`` and ``audit`` commands print (spec/v1/report.schema.json,
the same schema the TypeScript CLI's reports follow), plus readers of one run file and one state document."""

from __future__ import annotations

import os
from typing import Any, Callable, Literal, Sequence

from ._internals.audit import audit as _audit
from ._internals.derive import derive_sessions
from ._internals.discovery import discover
from ._internals.event_fold import fold_event_log
from ._internals.journal_file import read_journal_file
from ._internals.records import Findings, StrictFailure
from ._internals.run_fold import fold_run
from ._internals.state import read_state as _read_state

Mode = Literal["tolerant", "prefix", "strict"]

#: Severity and repairability of every finding code (spec §13.1; the TypeScript FINDING_CODES table).
FINDING_CODES: dict[str, tuple[str, bool]] = {
    "torn_tail": ("warn", True), "malformed_line": ("error", False), "glued_record": ("warn", False),
    "zero_filled_region": ("error", False), "oversized_line": ("error", False), "blank_line": ("info", False),
    "malformed_document": ("error", False), "unknown_record": ("info", False),
    "unsupported_version": ("warn", False), "invalid_record": ("error", False), "mixed_families": ("error", False),
    "unrecognised_file": ("info", False), "invalid_session_id": ("error", False), "invalid_run_id": ("error", False),
    "session_mismatch": ("warn", False), "run_id_mismatch": ("warn", False), "event_after_terminal": ("warn", False),
    "terminal_conflict": ("warn", False), "duplicate_event": ("info", False),
    "conflicting_duplicate": ("warn", False), "orphan_turn": ("warn", False),
    "turn_journal_pending_turn": ("warn", True), "turn_journal_interrupted_turn": ("info", False),
    "turn_journal_malformed_event": ("error", False), "seq_gap": ("warn", False), "seq_duplicate": ("error", False),
    "seq_regression": ("error", False), "abandoned_run": ("warn", True), "duplicate_run_start": ("warn", False),
    "inapplicable_event": ("warn", False), "epoch_conflict": ("error", False),
    "record_after_run_end": ("warn", False), "missing_header": ("warn", False),
    "unpaired_llm_request": ("warn", False), "unpaired_llm_response": ("warn", False),
    "agent_event_seq_regression": ("warn", False), "stale_state": ("warn", False), "stale_lock": ("info", True),
    "incomplete_read": ("error", False), "special_file": ("warn", False), "writer_violation_crlf": ("info", False),
    "writer_violation_bom": ("info", False), "writer_violation_unescaped_separator": ("info", False),
}
#: Bytes of a user message a report shows at most (TJ-AUDIT-012: reports never carry whole messages).
MAX_EXCERPT_BYTES = 64
_LOCATION = ("file", "line", "offset", "length", "session_id", "turn_id", "run_id")
_RUN_FOLD_CODES = {"missing_header", "record_after_run_end", "run_id_mismatch", "seq_duplicate", "seq_gap",
                   "agent_event_seq_regression", "unpaired_llm_request", "unpaired_llm_response"}
_TURN_LOCATION = ("session_id", "turn_id", "file", "line", "offset", "length", "run_id")


def spelled_as_given(paths: Sequence[str]) -> Callable[[str], str]:
    """A function that spells an absolute path under one of ``paths`` as the user gave that path (a report's paths
    are the user's, as the TypeScript CLI prints them)."""
    given = [(os.path.abspath(p), p.rstrip(os.sep) or p) for p in paths]

    def shown(path: str) -> str:
        for absolute, spelled in given:
            if path == absolute:
                return spelled
            if path.startswith(absolute + os.sep):
                return os.path.join(spelled, path[len(absolute) + 1:])
        return path

    return shown


def excerpt(text: str, max_bytes: int = MAX_EXCERPT_BYTES) -> tuple[str, bool]:
    """The first at most ``max_bytes`` UTF-8 bytes of ``text``, cut at a code point, and whether it was cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text, False
    return data[:max_bytes].decode("utf-8", "ignore"), True


def _message(finding: dict[str, Any]) -> str:
    code = finding["code"]
    if code == "torn_tail":
        return "%d byte(s) after the last LF are not a committed record and are ignored" % finding.get("length", 0)
    if code == "turn_journal_pending_turn":
        return "turn is %s and %s" % (finding.get("state", "unfinished"),
                                      "its writer is gone: recovery will close it as interrupted"
                                      if finding.get("repairable") else "a live writer holds its journal")
    if code == "turn_journal_interrupted_turn":
        return "turn was interrupted; the host transcript was not consulted"
    return code.replace("_", " ") + (" (%s)" % finding["reason"] if isinstance(finding.get("reason"), str) else "")


def _with_run(raw: dict[str, Any], run_of_file: dict[str, str]) -> dict[str, Any]:
    """A run fold's finding names its run, as the TypeScript reader's do."""
    if raw["code"] in _RUN_FOLD_CODES and raw.get("file") in run_of_file and "run_id" not in raw:
        return dict(raw, run_id=run_of_file[raw["file"]])
    return raw


def _finding(raw: dict[str, Any], shown: Any, session_of: dict[str, str], state_of: dict[str, str]) -> dict[str, Any]:
    severity, repairable = FINDING_CODES.get(raw["code"], ("warn", False))
    out: dict[str, Any] = {"code": raw["code"], "severity": raw.get("severity", severity),
                           "repairable": raw.get("repairable", repairable)}
    out["message"] = _message(dict(raw, repairable=out["repairable"], state=state_of.get(raw.get("turn_id"))))
    located = dict(raw)
    if "length" not in located and "head_length" in located:
        located["length"] = located["head_length"]
    if "length" not in located and "nul_length" in located:
        located["offset"], located["length"] = located["nul_offset"], located["nul_length"]
    if "turn_id" in located and "session_id" not in located and located["turn_id"] in session_of:
        located["session_id"] = session_of[located["turn_id"]]
    # A turn's audit finding names the turn first, then the file that holds it (the TypeScript reader's order).
    order = _TURN_LOCATION if raw["code"] in ("turn_journal_pending_turn", "turn_journal_interrupted_turn") \
        else _LOCATION
    for key in order:
        if key in located and located[key] is not None:
            out[key] = shown(located[key]) if key == "file" else located[key]
    return out


def check_store(paths: Sequence[str], mode: Mode = "tolerant", *, audit: bool = False,
                command: str | None = None) -> dict[str, Any]:
    """Read the files and store directories ``paths`` and return their report (spec/v1/report.schema.json): files,
    turn sessions, runs, event logs, findings; with ``audit``, the pending and interrupted turns and the recovery plan
    too. Changes nothing. Paths in the report are spelled as given."""
    if mode not in ("tolerant", "prefix", "strict"):
        raise ValueError("mode must be tolerant, prefix or strict, not %r" % (mode,))
    shown = spelled_as_given(paths)
    findings = Findings()
    files_out: list[dict[str, Any]] = []
    runs_out: list[dict[str, Any]] = []
    logs_out: list[dict[str, Any]] = []
    turn_files = []
    plan: list[dict[str, Any]] = []
    derived: dict[str, Any] = {}
    listed: set[str] = set()
    run_of_file: dict[str, str] = {}
    try:
        for kind, path in discover(list(paths), findings):
            if kind == "state":
                try:
                    state = _read_state(path, mode, findings)
                except StrictFailure:
                    state = None
                files_out.append({"path": shown(path), "family": "state", "records": 0 if state is None else 1})
                continue
            jf = read_journal_file(path, mode, findings, stream=True)
            files_out.append({"path": shown(path), "family": jf.family or "unknown", "records": jf.parsed})
            if jf.family == "turn":
                turn_files.append(jf)
            elif jf.family == "event":
                log = fold_event_log(jf, findings)
                parent = os.path.basename(os.path.dirname(path))
                entry: dict[str, Any] = {"file": shown(path)}
                if os.path.basename(path) == "events.jsonl":
                    entry["session_id"] = parent
                entry.update(last_seq=log["last_seq"], messages=len(log["messages"]),
                             active_request_id=log["active_request_id"], undelivered=list(log["undelivered"]))
                logs_out.append(entry)
            elif jf.family == "run":
                run = fold_run(jf, findings)
                if isinstance(run["run_id"], str):
                    run_of_file[path] = run["run_id"]
                entry = {"file": shown(path)}
                if isinstance(run["run_id"], str):
                    entry["run_id"] = run["run_id"]
                if run["session_id"] is not None:
                    entry["session_id"] = run["session_id"]
                entry["outcome"] = run["outcome"]
                if isinstance(run["last_status"], str):
                    entry["last_status"] = run["last_status"]
                entry.update(llm_calls=run["llm_calls"], agent_events=run["agent_events"])
                runs_out.append(entry)
        derived, listed = derive_sessions(turn_files, findings)
        if audit:
            plan = _audit(derived, turn_files, findings)
    except StrictFailure:
        pass  # the failure is the finding already recorded
    session_of = {tid: sid for sid, turns in derived.items() for tid in turns}
    sessions_out = []
    for sid in sorted(derived):
        turns = derived[sid]
        if not turns and sid not in listed:
            continue
        session_files = sorted(shown(jf.path) for jf in turn_files if os.path.basename(jf.path).split("~", 1)[0]
                               .removesuffix(".jsonl") == sid)
        sessions_out.append({"session_id": sid, "files": session_files,
                             "turns": [_report_turn(turns[tid]) for tid in sorted(turns)]})
    state_of = {tid: turn["state"] for turns in derived.values() for tid, turn in turns.items()}
    report_findings = [_finding(_with_run(f, run_of_file), shown, session_of, state_of) for f in findings.items]
    counts = {"error": 0, "warn": 0, "info": 0}
    for f in report_findings:
        counts[f["severity"]] += 1
    report: dict[str, Any] = {
        "spec": "v1", "command": command or ("audit" if audit else "check"), "mode": mode, "paths": list(paths),
        "clean": counts["error"] == 0 and counts["warn"] == 0,
        "summary": {"files": len(files_out), "records": sum(f["records"] for f in files_out),
                    "sessions": len(sessions_out), "turns": sum(len(s["turns"]) for s in sessions_out),
                    "findings": counts, "omitted": {}},
        "files": files_out, "sessions": sessions_out, "runs": runs_out, "event_logs": logs_out,
        "findings": report_findings,
    }
    if audit:
        report["plan"] = [dict(p, state=derived[p["session_id"]][p["turn_id"]]["state"]) for p in plan]
        report["plan"] = [{"session_id": p["session_id"], "turn_id": p["turn_id"], "state": p["state"],
                           "actions": p["actions"]} for p in report["plan"]]
    return report


def _report_turn(turn: dict[str, Any]) -> dict[str, Any]:
    records = turn["records"]
    submitted = records.get("submitted") or {}
    terminal = records.get("completed") or records.get("interrupted") or {}
    out: dict[str, Any] = {"turn_id": turn["turn_id"], "state": turn["state"], "orphan": turn["orphan"],
                           "terminal": turn["state"] in ("completed", "interrupted")}
    for key, source in (("submitted_at", submitted), ("ended_at", terminal)):
        at = source.get("created_at")
        if isinstance(at, (int, float)) and not isinstance(at, bool):
            # 1778458299.0 prints as 1778458299, as JSON.stringify does: the same value, the same text.
            out[key] = int(at) if isinstance(at, float) and at.is_integer() and abs(at) < 2 ** 53 else at
    reason = (records.get("interrupted") or {}).get("reason")
    if turn["state"] == "interrupted" and isinstance(reason, str):
        out["reason"] = reason
    if isinstance(submitted.get("content"), str):
        out["content_excerpt"], out["content_truncated"] = excerpt(submitted["content"])
    if isinstance(submitted.get("attachments"), list):
        out["attachments"] = len(submitted["attachments"])
    return out


def read_run(path: str) -> dict[str, Any]:
    """One run file's summary: ``run_id``, ``outcome`` (``incomplete`` when it was cut off), ``last_status``,
    ``llm_calls``, ``agent_events``, and its ``findings``."""
    findings = Findings()
    jf = read_journal_file(os.path.abspath(path), "tolerant", findings, stream=True)
    if jf.family != "run":
        raise ValueError("%s is not a run file" % path)
    run = fold_run(jf, findings)
    return {"run_id": run["run_id"], "session_id": run["session_id"], "outcome": run["outcome"],
            "last_status": run["last_status"], "llm_calls": run["llm_calls"], "agent_events": run["agent_events"],
            "findings": list(findings.items)}


def read_state(path: str) -> dict[str, Any] | None:
    """A session state document (spec §8), or None when it is malformed, invalid or of another major version."""
    return _read_state(os.path.abspath(path), "tolerant", Findings())
