"""The turn journal of seed 000's RFC: a user turn is durable before its worker starts, then advances through its
lifecycle (spec §5, §10, §11). One writer process appends to its own shard, ``<root>/_turn_journal/<sid>~<shard>.jsonl``,
and every shard of the session is read to decide what a retry or a step may do."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from ._internals.derive import fold_session
from ._internals.errors import BadRequest, TurnJournalError
from ._internals.journal_file import read_journal_file
from ._internals.lease import DEFAULT_LEASE_MS
from ._internals.records import RANK, Findings, valid_identifier
from ._internals.recovery import TURN_DIR
from ._internals.writer import AppendFile

TurnState = Literal["submitted", "worker_started", "assistant_started", "completed", "interrupted"]
Durability = Literal["every", "group", "none"]

_TERMINAL = 3


@dataclass(frozen=True)
class SubmitResult:
    """What ``submit`` did: ``created`` is False for a retry of a turn already journaled (nothing was written)."""

    turn_id: str
    created: bool
    state: TurnState


@dataclass
class _Turn:
    state: str
    content: Any
    stream_id: str | None


def new_turn_id() -> str:
    """A fresh turn id in seed 000's shape: UTC time and 12 random hex digits (``20260511T001122Z-c9bd17bc9fc0``)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + os.urandom(6).hex()


def turn_journal_path(root: str, session_id: str, shard: str | None = None) -> str:
    """Where a session's journal (or one process's shard of it) lives under a store root (spec §4.2)."""
    if not valid_identifier(session_id):
        raise BadRequest("session id %r is not an identifier (TJ-FAM-010)" % (session_id,))
    if shard is not None and not valid_identifier(shard):
        raise BadRequest("shard %r is not an identifier" % (shard,))
    name = session_id if shard is None else "%s~%s" % (session_id, shard)
    return os.path.join(os.path.abspath(root), TURN_DIR, name + ".jsonl")


class TurnJournal:
    """One session's turn journal open for appends (its file locked, a torn tail repaired). Every call that returns
    has its record on disk (fdatasync) unless ``durability`` is ``none``. Not thread-safe: one journal per thread, or
    a lock around it."""

    def __init__(self, root: str, session_id: str, *, shard: str | None = None, durability: Durability = "every",
                 lease_ms: int = DEFAULT_LEASE_MS):
        """Open (create if needed) the journal of ``session_id`` under ``root``; with ``shard`` (e.g. the process id),
        this process's own shard file. Raises TurnJournalError ``journal_locked`` when a live writer holds it.
        ``lease_ms``: the lease promised in the lock (TJ-DUR-038), renewed every fifth of it while the file is open."""
        self.session_id = session_id
        self.shard = shard
        self.path = turn_journal_path(root, session_id, shard)
        self._file: AppendFile | None = AppendFile(self.path, durability, lease_ms)
        self._turns: dict[str, _Turn] = {}
        try:
            self.refresh()
        except BaseException:
            self._file.close()
            raise

    def refresh(self) -> None:
        """Read every shard of the session again (what other processes journaled since), so that a retry that lands
        in another process is recognised."""
        directory = os.path.dirname(self.path)
        names = sorted(n for n in os.listdir(directory)
                       if n.endswith(".jsonl") and n[: -len(".jsonl")].split("~", 1)[0] == self.session_id)
        findings = Findings()
        files = [read_journal_file(os.path.join(directory, n), "tolerant", findings) for n in names]
        files = [jf for jf in files if jf.family == "turn"]
        derived = fold_session(self.session_id, files, findings)
        turns: dict[str, _Turn] = {}
        for jf in files:
            for rec in jf.records:
                obj = rec["obj"]
                if rec["type"] == "submitted" and obj.get("turn_id") in derived and obj["turn_id"] not in turns:
                    turns[obj["turn_id"]] = _Turn(derived[obj["turn_id"]]["state"], obj.get("content"),
                                                  obj.get("stream_id") if isinstance(obj.get("stream_id"), str)
                                                  else None)
        for tid, turn in derived.items():
            turns.setdefault(tid, _Turn(turn["state"], None, None))
        self._turns = turns

    def submit(self, content: str, *, turn_id: str | None = None, role: str = "user",
               attachments: Sequence[Mapping[str, Any]] | None = None, stream_id: str | None = None,
               workspace: str | None = None, model: str | None = None, model_provider: str | None = None,
               extra: Mapping[str, Any] | None = None) -> SubmitResult:
        """Journal a user turn's ``submitted`` and return once it is durable: start the worker only after this returns
        (TJ-DUR-001). A retry with the same ``turn_id`` and content writes nothing (``created`` False, TJ-TURN-012);
        the same id with other content raises TurnJournalError ``refused`` (TJ-TURN-003)."""
        if not isinstance(content, str):
            raise BadRequest("content must be a string")
        tid = turn_id if turn_id is not None else new_turn_id()
        if not isinstance(tid, str) or not tid:
            raise BadRequest("turn_id must be a non-empty string")
        known = self._turns.get(tid)
        if known is None:
            self.refresh()
            known = self._turns.get(tid)
        if known is not None:
            if known.content == content:
                return SubmitResult(tid, False, known.state)  # type: ignore[arg-type]
            raise TurnJournalError("refused", "turn %s was submitted with other content (TJ-TURN-003)" % tid)
        record: dict[str, Any] = {"version": 1, "event": "submitted", "turn_id": tid, "session_id": self.session_id}
        if stream_id is not None:
            record["stream_id"] = stream_id
        record.update(created_at=time.time(), role=role, content=content)
        if attachments is not None:
            record["attachments"] = [dict(a) for a in attachments]
        for key, value in (("workspace", workspace), ("model", model), ("model_provider", model_provider)):
            if value is not None:
                record[key] = value
        for key, value in (extra or {}).items():
            record.setdefault(key, value)
        self._writer().append(record)
        self._turns[tid] = _Turn("submitted", content, stream_id)
        return SubmitResult(tid, True, "submitted")

    def worker_started(self, turn_id: str) -> None:
        """Journal that the worker picked the turn up."""
        self._step(turn_id, "worker_started", {})

    def assistant_started(self, turn_id: str, assistant_message_index: int | None = None) -> None:
        """Journal that assistant output was first persisted (its index in the host transcript, when known)."""
        self._step(turn_id, "assistant_started",
                   {} if assistant_message_index is None else {"assistant_message_index": assistant_message_index})

    def complete(self, turn_id: str, assistant_message_index: int | None = None) -> None:
        """Journal that the answer was saved by the host: the turn is finished (terminal)."""
        self._step(turn_id, "completed", {"assistant_message_index": assistant_message_index, "terminal": True})

    def interrupt(self, turn_id: str, reason: str) -> None:
        """Journal that the turn ended without an answer (``cancelled``, ``rate_limit``, …): terminal."""
        if not isinstance(reason, str) or not reason:
            raise BadRequest("reason must be a non-empty string")
        self._step(turn_id, "interrupted", {"reason": reason, "terminal": True})

    def state_of(self, turn_id: str) -> TurnState | None:
        """The turn's derived state as this journal knows it, or None for a turn it never saw."""
        turn = self._turns.get(turn_id)
        return None if turn is None else turn.state  # type: ignore[return-value]

    def pending_turns(self) -> list[tuple[str, TurnState]]:
        """The turns not yet finished, as (turn id, state), in turn id order."""
        return [(tid, t.state) for tid, t in sorted(self._turns.items())  # type: ignore[misc]
                if RANK[t.state] < _TERMINAL]

    @property
    def took_over_lock(self) -> bool:
        """True when opening took the file's lock over from a writer proved dead, or presumed dead because its lease
        ran out (spec §11.4)."""
        return self._writer().took_over

    def close(self) -> None:
        """fsync the file and release its lock; later calls raise."""
        if self._file is not None:
            file, self._file = self._file, None
            file.close()

    def __enter__(self) -> "TurnJournal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _writer(self) -> AppendFile:
        if self._file is None:
            raise TurnJournalError("failed", "the turn journal %s is closed" % self.path)
        return self._file

    def _step(self, turn_id: str, event: str, fields: dict[str, Any]) -> None:
        turn = self._turns.get(turn_id)
        if turn is None or RANK[event] <= RANK[turn.state] or RANK[turn.state] == _TERMINAL:
            self.refresh()
            turn = self._turns.get(turn_id)
        if turn is None:
            raise TurnJournalError("refused", "turn %s was never submitted in session %s" % (turn_id, self.session_id))
        if RANK[turn.state] == _TERMINAL or RANK[event] <= RANK[turn.state]:
            raise TurnJournalError("refused", "%s does not raise the state of turn %s, which is %s (TJ-TURN-014)"
                                   % (event, turn_id, turn.state))
        record: dict[str, Any] = {"version": 1, "event": event, "turn_id": turn_id, "session_id": self.session_id}
        if turn.stream_id is not None:
            record["stream_id"] = turn.stream_id
        record["created_at"] = time.time()
        record.update(fields)
        self._writer().append(record)
        turn.state = event
