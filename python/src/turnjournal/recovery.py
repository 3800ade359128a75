"""Startup recovery (spec §12, seed 000): every turn whose writer is gone and that never finished gets its user
message restored into the host's transcript, a visible interruption marker, and an ``interrupted`` record with reason
``server_startup_recovery``; never a fake answer, never a resumed provider call. The host's part is two hooks written
in Python; the journal's part is done here."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._internals.at_rest import settle_files_at_rest
from ._internals.audit import audit
from ._internals.discovery import discover
from ._internals.event_fold import fold_event_log
from ._internals.journal_file import read_journal_file
from ._internals.records import Findings
from ._internals.errors import TurnJournalError
from ._internals.liveness import held_by_live_writer
from ._internals.recovery import TURN_DIR, _turn_store
from ._internals.writer import AppendFile, WriterError
from .events import EventLog

#: The reason of the ``interrupted`` record recovery appends.
SERVER_STARTUP_RECOVERY = "server_startup_recovery"


@dataclass(frozen=True)
class RecoveringTurn:
    """The turn a hook is called for."""

    session_id: str
    turn_id: str
    state: str


class RecoveryHooks(Protocol):
    """What the host does for an abandoned turn. Both calls must be idempotent, keyed by ``turn.turn_id``: recovery
    that crashed half-way runs them again (TJ-RECOV-007)."""

    def ensure_user_message(self, turn: RecoveringTurn, submitted: dict[str, Any]) -> None:
        """Put the submitted user message into the host transcript unless it is there (with a recovery marker)."""

    def ensure_interruption_marker(self, turn: RecoveringTurn) -> None:
        """Add a visible interruption marker for the turn to the host transcript unless it is there."""


@dataclass(frozen=True)
class PlannedTurn:
    """One abandoned turn of the plan and the steps recovery takes for it, in order."""

    session_id: str
    turn_id: str
    state: str
    actions: list[dict[str, Any]]


@dataclass
class StoreRecovery:
    """What recovery planned and, when applied, did. ``complete`` is False when a live writer held a journal or a
    turn was skipped for another reason than having finished meanwhile: run it again later."""

    applied: bool
    plan: list[PlannedTurn]
    turns: list[dict[str, Any]] = field(default_factory=list)
    held_files: list[str] = field(default_factory=list)
    #: Event logs with a run that never finished: ``{"file", "cancelled": [{"request_id", "seq"}], "skipped"?}``.
    event_logs: list[dict[str, Any]] = field(default_factory=list)
    #: Applied: the files whose writer is gone left plain JSONL at rest, their pre-allocated space truncated and
    #: their leftover lock removed (TJ-RECOV-014): ``{"file", "trimmed_bytes", "removed_lock"}``. Not in ``to_json``.
    settled: list[dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when nothing planned was left alone."""
        return not self.held_files and all(t["outcome"] == "recovered" or t.get("reason") == "finished"
                                           for t in self.turns) and not any("skipped" in log for log in self.event_logs)

    def to_json(self) -> dict[str, Any]:
        """The JSON output of ``recover`` (spec/v1/recover.schema.json)."""
        return {"command": "recover", "applied": self.applied, "complete": self.complete,
                "plan": [{"session_id": p.session_id, "turn_id": p.turn_id, "state": p.state, "actions": p.actions}
                         for p in self.plan],
                "turns": list(self.turns), "held_files": list(self.held_files),
                "event_logs": [dict(log) for log in self.event_logs],
                "settled": [dict(done) for done in self.settled]}


def _store_root(path: str) -> str:
    path = os.path.abspath(path)
    return os.path.dirname(path) if os.path.basename(path) == TURN_DIR else path


def plan_recovery(root: str) -> StoreRecovery:
    """The recovery plan of the turn journals under ``root`` (``<root>/_turn_journal``), changing nothing: turns
    under a live writer's lock are not in it (TJ-RECOV-002)."""
    root = _store_root(root)
    findings, turn_files, derived = _turn_store(root)
    plan: list[PlannedTurn] = []
    held = sorted(jf.path for jf in turn_files if held_by_live_writer(jf.path))
    for entry in audit(derived, turn_files, findings):
        sid, tid = entry["session_id"], entry["turn_id"]
        files = derived[sid][tid]["files"]
        submitted = next((rec["obj"] for jf in turn_files if jf.path in files for rec in jf.records
                          if rec["type"] == "submitted" and rec["obj"].get("turn_id") == tid), None)
        record: dict[str, Any] = {"version": 1, "event": "interrupted", "turn_id": tid, "session_id": sid,
                                  "reason": SERVER_STARTUP_RECOVERY}
        if submitted is not None and isinstance(submitted.get("stream_id"), str):
            record["stream_id"] = submitted["stream_id"]  # TJ-RECOV-006
        actions: list[dict[str, Any]] = []
        for kind in entry["actions"]:
            if kind == "ensure_user_message":
                actions.append({"kind": kind, "submitted": submitted})
            elif kind == "append_interrupted":
                actions.append({"kind": kind, "record": record})
            else:
                actions.append({"kind": kind})
        plan.append(PlannedTurn(sid, tid, derived[sid][tid]["state"], actions))
    logs = [{"file": path, "cancelled": []} for path in _unfinished_event_logs(root)]
    return StoreRecovery(False, plan, held_files=held, event_logs=logs)


def _unfinished_event_logs(root: str) -> list[str]:
    """Event logs under ``root`` with a run that never finished (active or abandoned), whose writer is gone."""
    findings = Findings()
    out = []
    for kind, path in discover([root], findings):
        if kind != "jsonl":
            continue
        jf = read_journal_file(path, "tolerant", findings, stream=True)
        if jf.family != "event":
            continue
        state = fold_event_log(jf, findings)
        abandoned = any(f["code"] == "abandoned_run" and f.get("file") == path for f in findings.items)
        if (state["active_request_id"] is not None or abandoned) and not held_by_live_writer(path):
            out.append(path)
    return out


def recover_store(root: str, hooks: RecoveryHooks | None) -> StoreRecovery:
    """Perform startup recovery of the turn journals under ``root``: for each planned turn, the host hooks first
    (``hooks`` None: a store without a host transcript, only the journals are closed), then the ``interrupted``
    record, appended under the journal's lock after checking the turn is still unfinished. Safe to run twice or to
    run again after a crash (TJ-RECOV-007). Last, every file under ``root`` whose writer is gone is left plain JSONL
    at rest: no pre-allocated space after its lines, no leftover lock (TJ-RECOV-014, ``settled``)."""
    recovery = plan_recovery(root)
    recovery.applied = True
    for planned in recovery.plan:
        turn = RecoveringTurn(planned.session_id, planned.turn_id, planned.state)
        performed: list[str] = []
        outcome: dict[str, Any] = {"session_id": turn.session_id, "turn_id": turn.turn_id}
        record = next(a["record"] for a in planned.actions if a["kind"] == "append_interrupted")
        files = _files_of(root, turn)
        try:
            for action in planned.actions:
                kind = action["kind"]
                # Without hooks (a store with no host transcript) the host's steps are done by doing nothing.
                if kind == "ensure_user_message":
                    if hooks is not None:
                        hooks.ensure_user_message(turn, dict(action["submitted"]))
                    performed.append(kind)
                elif kind == "ensure_interruption_marker":
                    if hooks is not None:
                        hooks.ensure_interruption_marker(turn)
                    performed.append(kind)
                elif kind == "append_interrupted":
                    skipped = _append_interrupted(files, turn, record)
                    if skipped is not None:
                        recovery.turns.append(dict(outcome, outcome="skipped", performed=performed, reason=skipped))
                        break
                    performed.append(kind)
            else:
                recovery.turns.append(dict(outcome, outcome="recovered", performed=performed))
        except WriterError as error:
            if error.code != "journal_locked":
                raise
            recovery.held_files.extend(f for f in files if f not in recovery.held_files)
            recovery.turns.append(dict(outcome, outcome="skipped", performed=performed, reason="held"))
    for log in recovery.event_logs:
        try:
            with EventLog(log["file"]) as opened:
                log["cancelled"] = opened.cancel_unfinished_runs(SERVER_STARTUP_RECOVERY)
        except WriterError as error:
            if error.code != "journal_locked":
                raise
            log["skipped"] = str(error)
    recovery.settled, _ = settle_files_at_rest(_store_root(root))
    return recovery


def _files_of(root: str, turn: RecoveringTurn) -> list[str]:
    _, _, derived = _turn_store(_store_root(root))
    return list(derived.get(turn.session_id, {}).get(turn.turn_id, {}).get("files", []))


def _append_interrupted(files: list[str], turn: RecoveringTurn, record: dict[str, Any]) -> str | None:
    """Append the record to the turn's first file under its lock, unless it finished meanwhile (returns why not)."""
    if not files:
        raise TurnJournalError("failed", "turn %s of session %s has no journal file" % (turn.turn_id, turn.session_id))
    writer = AppendFile(files[0], "every")
    try:
        _, _, derived = _turn_store(os.path.dirname(os.path.dirname(files[0])))
        state = derived.get(turn.session_id, {}).get(turn.turn_id, {}).get("state")
        if state in ("completed", "interrupted"):
            return "finished"
        final = {k: record[k] for k in ("version", "event", "turn_id", "session_id", "stream_id") if k in record}
        final.update(created_at=time.time(), reason=record["reason"], terminal=True)
        writer.append(final)
        return None
    finally:
        writer.close()
