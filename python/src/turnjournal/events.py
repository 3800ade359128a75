"""The event log of seed 002 (gptme's write-ahead log): message appends, edits, undos and checkpoints with a seq,
crash-safe appends, recovery of the message list and compaction (spec §6, §14.2, §15)."""

from __future__ import annotations

import datetime
import json
import os
import time
from typing import Any, Mapping, Sequence, TypedDict

from ._internals import defects
from ._internals.errors import BadRequest, TurnJournalError
from ._internals.event_fold import FINISHING, EventFold
from ._internals.journal_file import read_journal_file
from ._internals.records import Findings
from ._internals.retention import compact_event_log as _compact
from ._internals.schema import LINE_LIMIT, is_integer
from ._internals.lease import DEFAULT_LEASE_MS
from ._internals.writer import AppendFile, open_regular
from .journal import Durability

#: Records between checkpoints, as in gptme (spec TJ-EVENT-006 adds a byte condition).
CHECKPOINT_INTERVAL = 50
#: Messages a part of a split checkpoint holds at most, in bytes of their JSON, unless one message is longer: a reader
#: parses a part whole, so parts far below the 16 MiB line-size limit keep that cheap.
_PART_BYTES = 1024 * 1024
#: Room on a checkpoint's line for what surrounds its payload: seq, ts, type and an epoch of up to 128 characters.
_ENVELOPE_BYTES = 512
_RUN_TYPES = ("chat.started", "delivery.ack") + FINISHING
_OUTCOMES = {"chat.done": "done", "chat.error": "error", "chat.cancelled": "cancelled"}


def event_log_path(logdir: str) -> str:
    """The event log of a conversation directory: ``<logdir>/events.jsonl``."""
    return os.path.join(logdir, "events.jsonl")


def _resolve(path: str) -> str:
    """A conversation directory stands for its events.jsonl, as gptme's functions take the log directory."""
    return event_log_path(path) if os.path.isdir(path) else path


def read_events(path: str) -> list[dict[str, Any]]:
    """Every valid record of an event log (a file, or a conversation directory), in file order; damage is skipped
    (tolerant mode). An empty list when there is no log, as gptme's ``read_events``."""
    file = _resolve(path)
    if not os.path.exists(file):
        return []
    return [rec["obj"] for rec in read_journal_file(file, "tolerant", Findings()).records if rec["type"] is not None]


def recover_messages(path: str) -> list[dict[str, Any]] | None:
    """The message list an event log (a file, or a conversation directory) rebuilds: the latest valid checkpoint plus
    the appends, edits and undos after it (spec §15.1). None when there is no log or it holds no message, as gptme's
    ``recover_messages``, so a caller can fall back to its primary file."""
    file = _resolve(path)
    if not os.path.exists(file):
        return None
    findings = Findings()
    jf = read_journal_file(file, "tolerant", findings, stream=True)
    if jf.family != "event":
        return None
    fold = jf.fold if jf.fold is not None else EventFold(file, findings)
    messages = fold.finish()["messages"]
    return list(messages) or None


def compact_event_log(path: str, *, retention_seconds: float | None = None,
                      delivery_window_seconds: float | None = None, now: float | None = None) -> dict[str, Any]:
    """Compact an event log (a file, or a conversation directory) that no EventLog of this process holds: drop the
    records before the latest checkpoint that nothing needs any more (spec §14.2; retention 48 h by default), rewriting
    the file atomically. Safe beside gptme's own writer: it holds gptme's ``flock`` on ``.events.jsonl.lock`` from its
    read to its rename (spec TJ-DUR-050), and leaves a file that changed meanwhile as it was (TJ-DUR-051, then
    ``skipped`` says so). Returns ``{"removed_records": n, "expired": [request ids]}``. Raises TurnJournalError
    ``journal_locked`` while a live turnjournal writer holds the log, or gptme holds its flock for 10 s."""
    file = _resolve(path)
    now_ms = (time.time() if now is None else now) * 1000
    return _compact(os.path.abspath(file), now_ms, retention_seconds, delivery_window_seconds)


class EventLogState(TypedDict):
    """What ``recover_event_log`` derives from an event log (spec §6.5, §15): the fold of its accepted records."""

    messages: list[Any]
    last_seq: int | None
    epoch: str | None
    active_request_id: str | None
    overlay: str | None
    undelivered: list[str]
    findings: list[dict[str, Any]]


def recover_event_log(path: str) -> EventLogState:
    """The state of an event log (a file, or a conversation directory): its message list, last seq, epoch, the run
    still active with its streamed text so far, the finished runs no client acknowledged, and the findings of the
    read (tolerant mode: damage is skipped and reported). A log that does not exist is an empty log — no messages, no
    seq, no findings — as gptme's ``read_events`` answers ``[]``, not an error. A path that is not an event log
    raises BadRequest."""
    file = _resolve(path)
    findings = Findings()
    try:
        jf = read_journal_file(file, "tolerant", findings, stream=True)
    except FileNotFoundError:
        return {"messages": [], "last_seq": None, "epoch": None, "active_request_id": None, "overlay": None,
                "undelivered": [], "findings": []}
    if jf.routed and jf.family != "event":
        raise BadRequest("%s is not an event log (its records are of the %s family)" % (file, jf.family))
    fold = jf.fold if jf.fold is not None else EventFold(file, findings)
    state = fold.finish()
    return {"messages": list(state["messages"]), "last_seq": state["last_seq"], "epoch": state["epoch"],
            "active_request_id": state["active_request_id"], "overlay": state["overlay"],
            "undelivered": list(state["undelivered"]), "findings": list(findings.items)}


def _json_bytes(value: Any) -> int:
    """The bytes of ``value`` in a line as the writer encodes it (compact JSON, ASCII-escaped)."""
    return len(json.dumps(value, ensure_ascii=True, separators=(",", ":")))


def _now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")


class EventLog:
    """An event log open for appends (its file locked, a torn tail repaired), with its message list in memory. Each
    call returns once its record is durable (unless ``durability`` is ``none``) and returns the record's seq. A
    checkpoint of the whole message list is appended every ``checkpoint_interval`` records, so recovery replays at
    most that many. Not thread-safe."""

    def __init__(self, path: str, *, durability: Durability = "every", checkpoint_interval: int = CHECKPOINT_INTERVAL,
                 lease_ms: int = DEFAULT_LEASE_MS):
        """Open (create if needed) the log at ``path``, a file or a conversation directory (``events.jsonl`` in it).
        Raises TurnJournalError ``journal_locked`` when a live writer holds it. ``lease_ms`` is the lease promised in
        the lock (spec TJ-DUR-038): a writer in another container of this machine takes the log over once the lease has
        not been renewed for that long, so a crashed writer's log is free again within about twice it."""
        if not isinstance(checkpoint_interval, int) or checkpoint_interval < 1:
            raise BadRequest("checkpoint_interval must be an integer >= 1")
        self.path = os.path.abspath(_resolve(path))
        self.checkpoint_interval = checkpoint_interval
        self._file: AppendFile | None = AppendFile(self.path, durability, lease_ms)
        try:
            self._load()
        except BaseException:
            self._file.close()
            raise

    def _load(self) -> None:
        findings = Findings()
        jf = read_journal_file(self.path, "tolerant", findings)
        if jf.records and jf.family != "event":
            raise BadRequest("%s is not an event log (its records are of the %s family)" % (self.path, jf.family))
        fold = EventFold(self.path, findings)
        since = 0
        last_checkpoint_bytes = 0
        self._runs: dict[str, dict[str, Any]] = {}
        for rec in jf.records:
            fold.feed(rec)
            since += 1
            if rec["type"] in ("checkpoint", "checkpoint.part") and not rec.get("unknown"):
                since, last_checkpoint_bytes = 0, len(rec["raw"]) + 1
            self._index(rec["obj"])
        state = fold.finish()
        self._messages: list[Any] = list(state["messages"])
        self.last_seq: int | None = state["last_seq"]
        self.epoch: str | None = state["epoch"]  # the log's history (spec §6.7): kept on every checkpoint
        self._since_checkpoint = since
        self._last_checkpoint_bytes = last_checkpoint_bytes
        size = os.path.getsize(self.path)
        # Bytes written after the last checkpoint's line (TJ-EVENT-006's byte condition).
        last_cp = next((r for r in reversed(jf.records) if r["type"] == "checkpoint" and not r.get("unknown")), None)
        self._since_checkpoint_bytes = size - (last_cp["offset"] + len(last_cp["raw"]) + 1) if last_cp else size

    def _index(self, record: dict[str, Any]) -> None:
        """Fold one record into the run index (spec §6.2): a checkpoint's valid index replaces it (the records before
        it may be compacted away); without one, or with a malformed one, the whole log's records count (TJ-EVENT-020)."""
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        kind = record.get("type")
        if kind == "checkpoint.part" and (not is_integer(payload.get("parts"))
                                          or payload.get("part") != payload["parts"] - 1):
            return  # only a split checkpoint's last part carries the run index (TJ-EVENT-030)
        if kind in ("checkpoint", "checkpoint.part"):
            index = payload.get("runs")
            if isinstance(index, list) and all(isinstance(e, dict) and isinstance(e.get("request_id"), str)
                                               for e in index):
                self._runs = {e["request_id"]: dict(e, acked_by=list(e.get("acked_by") or [])) for e in index}
            return
        rid = payload.get("request_id")
        if not isinstance(rid, str) or kind not in _RUN_TYPES:
            return
        if kind == "chat.started":
            if rid not in self._runs:
                self._runs[rid] = {"request_id": rid, "started_seq": record["seq"], "started_ts": record["ts"],
                                   "outcome": None, "finished_seq": None, "finished_ts": None, "acked": False,
                                   "acked_by": []}
            return
        run = self._runs.get(rid)
        if run is None:
            return
        if kind in _OUTCOMES and run["outcome"] is None:
            run.update(outcome=_OUTCOMES[kind], finished_seq=record["seq"], finished_ts=record["ts"])
        elif kind == "delivery.ack":
            run["acked"] = True
            client = payload.get("client_id")
            if isinstance(client, str) and client not in run["acked_by"]:
                run["acked_by"].append(client)

    @property
    def messages(self) -> list[Any]:
        """The current message list (a copy)."""
        return list(self._messages)

    def append_message(self, message: Mapping[str, Any]) -> int:
        """Append a message (``message_append``); returns its seq."""
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise BadRequest("a message must be an object with a string role")
        seq = self._append("message_append", {"message": dict(message)})
        self._messages.append(dict(message))
        self._maybe_checkpoint()
        return seq

    def edit_message(self, index: int, message: Mapping[str, Any]) -> int:
        """Replace the message at ``index`` (``message_edit``); returns its seq."""
        if not is_integer(index) or not 0 <= index < len(self._messages):
            raise BadRequest("index %r is not a message of this log (it has %d)" % (index, len(self._messages)))
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise BadRequest("a message must be an object with a string role")
        seq = self._append("message_edit", {"index": index, "message": dict(message)})
        self._messages[index] = dict(message)
        self._maybe_checkpoint()
        return seq

    def replace_messages(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Replace the whole message list (``message_edit`` with ``messages``); returns its seq."""
        copied = [dict(m) for m in messages]
        if not all(isinstance(m.get("role"), str) for m in copied):
            raise BadRequest("every message must be an object with a string role")
        seq = self._append("message_edit", {"messages": copied})
        self._messages = copied
        self._maybe_checkpoint()
        return seq

    def undo(self, n: int = 1) -> int:
        """Remove the last ``n`` messages (``undo``); returns its seq. Refuses to remove more than there are."""
        if not is_integer(n) or n < 1 or n > len(self._messages):
            raise BadRequest("cannot undo %r of %d messages" % (n, len(self._messages)))
        seq = self._append("undo", {"n": n})
        del self._messages[len(self._messages) - n:]
        self._maybe_checkpoint()
        return seq

    def checkpoint(self) -> int:
        """Append a checkpoint of the whole message list now; returns its seq."""
        runs = [dict(run) for run in self._runs.values()]  # TJ-EVENT-019
        if defects.MUTANT == "checkpoint-always-split":  # defect switch: TJ-EVENT-029 (splits a list that fits one line)
            head, tail = self._messages[:1], self._messages[1:]
            seq = self._append("checkpoint.part", {"part": 0, "parts": 2, "messages": head})
            self._append("checkpoint.part", {"part": 1, "parts": 2, "messages": tail, "runs": runs})
        elif _json_bytes({"messages": self._messages, "runs": runs}) + _ENVELOPE_BYTES <= LINE_LIMIT:
            seq = self._append("checkpoint", {"messages": list(self._messages), "runs": runs})
        else:
            seq = self._append_split(runs)
        self._since_checkpoint = 0
        return seq

    def _append_split(self, runs: list[dict[str, Any]]) -> int:
        """Append the checkpoint as a split checkpoint (spec §6.2, TJ-EVENT-028): its line would be over the line-size
        limit. The parts take consecutive seqs, hold the messages in order, and only the last carries the run index (and,
        through _append, the epoch): TJ-EVENT-030. A message whose part alone is over the limit fails, as TJ-EVENT-022
        says."""
        groups: list[list[Any]] = [[]]
        size = 0
        for message in self._messages:
            length = _json_bytes(message) + 1
            if groups[-1] and size + length > _PART_BYTES:
                groups.append([])
                size = 0
            groups[-1].append(message)
            size += length
        if len(groups) == 1:
            groups.insert(0, [])
        fd = self._writer().fd
        before = os.fstat(fd).st_size
        first = None
        for part, messages in enumerate(groups):
            payload: dict[str, Any] = {"part": part, "parts": len(groups), "messages": messages}
            if part == len(groups) - 1:
                payload["runs"] = runs
            seq = self._append("checkpoint.part", payload)
            first = seq if first is None else first
        # TJ-EVENT-006's byte condition counts every part's line.
        self._last_checkpoint_bytes = os.fstat(fd).st_size - before
        assert first is not None
        return first

    def append(self, type: str, payload: Mapping[str, Any]) -> int:
        """Append a record of another type (stream events, delivery acks, ``x.<org>.<name>`` extensions) with the
        next seq; returns it. A run is refused while another is active or when its request id already has one
        (TJ-EVENT-009/010). Messages are changed only through the calls above."""
        if type in ("message_append", "message_edit", "undo", "checkpoint", "checkpoint.part"):
            raise BadRequest("use append_message, edit_message, replace_messages, undo or checkpoint for %s" % type)
        body = dict(payload)
        if type == "chat.started":
            if body.get("request_id") in self._runs:
                raise TurnJournalError("refused", "request %s already has a run (TJ-EVENT-010)" % body.get("request_id"))
            if self._runs and list(self._runs.values())[-1]["outcome"] is None:
                raise TurnJournalError("refused", "a run is active (TJ-EVENT-009)")
        through = body.get("through_seq")
        next_seq = 0 if self.last_seq is None else self.last_seq + 1
        if type == "delivery.ack" and is_integer(through) and through >= next_seq:
            raise TurnJournalError("refused", "through_seq %d is not below this ack's seq %d (TJ-EVENT-021)"
                                   % (through, next_seq))
        seq = self._append(type, body)
        self._maybe_checkpoint()
        return seq

    def cancel_unfinished_runs(self, reason: str = "server_startup_recovery") -> list[dict[str, Any]]:
        """Close every run of the log that never finished with ``chat.cancelled`` (TJ-RECOV-011), so that clients
        stop waiting for it: call it at startup, before this process starts runs of its own. Returns the runs closed,
        ``[{"request_id", "seq"}]``, in start order."""
        if not isinstance(reason, str) or not reason:
            raise BadRequest("reason must be a non-empty string")
        unfinished = [rid for rid, run in self._runs.items() if run["outcome"] is None]
        return [{"request_id": rid, "seq": self._append("chat.cancelled", {"request_id": rid, "reason": reason})}
                for rid in unfinished]

    def compact(self, *, now: float | None = None, retention_seconds: float | None = None,
                delivery_window_seconds: float | None = None) -> dict[str, Any]:
        """Drop the records before the latest checkpoint that nothing needs any more (spec §14.2; default retention
        48 h), rewriting the file atomically, under gptme's flock too (see :func:`compact_event_log`). Returns
        ``{"removed_records": n, "expired": [request ids]}``."""
        writer = self._writer()
        now_ms = (time.time() if now is None else now) * 1000
        result = _compact(self.path, now_ms, retention_seconds, delivery_window_seconds, lock_held=True)
        if result["removed_records"]:
            # The file was replaced: appends must go to the new one.
            os.close(writer.fd)
            writer.fd = open_regular(self.path, os.O_RDWR | os.O_APPEND)
        return result

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

    def __enter__(self) -> "EventLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _writer(self) -> AppendFile:
        if self._file is None:
            raise TurnJournalError("failed", "the event log %s is closed" % self.path)
        return self._file

    def _append(self, type: str, payload: dict[str, Any]) -> int:
        writer = self._writer()
        seq = 0 if self.last_seq is None else self.last_seq + 1
        record: dict[str, Any] = {"seq": seq, "ts": _now_iso(), "type": type, "payload": payload}
        last_part = type == "checkpoint.part" and payload["part"] == payload["parts"] - 1
        if (type == "checkpoint" or last_part) and self.epoch is not None:
            record["epoch"] = self.epoch  # TJ-EVENT-024: a recovery from this checkpoint keeps the log's history
        before = os.fstat(writer.fd).st_size
        writer.append(record)
        self.last_seq = seq
        self._since_checkpoint += 1
        written = os.fstat(writer.fd).st_size - before
        self._since_checkpoint_bytes += written
        self._index(record)
        if type in ("checkpoint", "checkpoint.part"):
            self._last_checkpoint_bytes = written  # the checkpoint's own line
            self._since_checkpoint_bytes = 0
        return seq

    def _maybe_checkpoint(self) -> None:
        # TJ-EVENT-006: after checkpoint_interval records, once at least as many bytes as the previous checkpoint's
        # line were written since it, so a checkpoint never costs more than the records it bounds.
        if self._since_checkpoint >= self.checkpoint_interval \
                and self._since_checkpoint_bytes >= self._last_checkpoint_bytes:
            self.checkpoint()
