"""Seed 004's per-run session store (spec §7, §8, §16): the writer of one run file (``RunWriter``) and the writer of a
session's state snapshot (``write_state``). A run file is appended to under its lock, one record per call, durable
when the call returns; a state document is replaced atomically."""

from __future__ import annotations

import datetime
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ._internals.errors import BadRequest, TurnJournalError
from ._internals.journal_file import read_journal_file
from ._internals.lease import DEFAULT_LEASE_MS
from ._internals.records import Findings, valid_identifier
from ._internals.schema import DOCUMENT_LIMIT, is_integer, valid_def
from ._internals.writer import AppendFile, acquire_lock, atomic_replace, make_dirs, release_lock
from .journal import Durability

#: Record types with a method of their own, which keeps the run's invariants; ``append`` refuses them.
_DEDICATED = {"header": "the constructor (it writes the header once, TJ-RUN-004)", "agent.event": "agent_event()",
              "llm.request": "llm_request()", "llm.response": "llm_response()", "run.end": "end()"}

_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?(?:([Zz])|([+-])(\d\d):(\d\d))\Z")

Timestamp = str | datetime.datetime


def utc_timestamp(value: Timestamp, what: str = "timestamp") -> str:
    """``value`` (an RFC 3339 string with any offset, or a timezone-aware datetime) as the same instant in UTC,
    ``YYYY-MM-DDTHH:MM:SS[.fraction]Z`` (spec TJ-FAM-021). The fraction of a string is copied, not rounded; a leap
    second (``:60``) is kept. Raises BadRequest for anything else (a naive datetime names no instant)."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise BadRequest("the %s %r is a naive datetime: give it a timezone" % (what, value))
        utc = value.astimezone(datetime.timezone.utc)
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (utc.microsecond // 1000)
    match = _RFC3339.match(value) if isinstance(value, str) else None
    if match is None:
        raise BadRequest("the %s %r is not an RFC 3339 timestamp (e.g. 2026-02-03T12:34:56.789Z)"
                         % (what, str(value)[:80]))
    year, month, day, hour, minute, second = (int(g) for g in match.group(1, 2, 3, 4, 5, 6))
    offset = datetime.timedelta(0)
    if match.group(8) is None:
        hours, minutes = int(match.group(10)), int(match.group(11))
        if hours > 23 or minutes > 59:
            raise BadRequest("the %s %r has an offset out of range" % (what, value))
        offset = datetime.timedelta(hours=hours, minutes=minutes) * (-1 if match.group(9) == "-" else 1)
    try:
        local = datetime.datetime(year, month, day, hour, minute, min(second, 59))
    except ValueError:
        raise BadRequest("the %s %r has a field out of range" % (what, value)) from None
    if second > 60:
        raise BadRequest("the %s %r has a field out of range" % (what, value))
    try:
        utc = local - offset
    except OverflowError:
        raise BadRequest("the %s %r is outside the years 0001-9999" % (what, value)) from None
    seconds = "60" if second == 60 else "%02d" % utc.second
    return utc.strftime("%Y-%m-%dT%H:%M:") + seconds + (match.group(7) or "") + "Z"


def _now() -> str:
    return utc_timestamp(datetime.datetime.now(datetime.timezone.utc))


def run_file_path(root: str, run_id: str, started_at: Timestamp) -> str:
    """The recommended path of a run file (spec §4.4): ``<root>/sessions/YYYY/MM/DD/<run_id>.jsonl``, the UTC date of
    ``started_at``. The run id is checked before the path is built (TJ-FAM-010)."""
    if not isinstance(run_id, str) or not valid_identifier(run_id):
        raise BadRequest("run id %r is not an identifier (TJ-FAM-010)" % (run_id,))
    day = utc_timestamp(started_at, "started_at")
    return os.path.join(os.path.abspath(root), "sessions", day[0:4], day[5:7], day[8:10], run_id + ".jsonl")


def state_document_path(root: str, session_id: str) -> str:
    """The recommended path of a session's state document (spec §4.4): ``<root>/sessions/state/<session_id>.json``."""
    if not isinstance(session_id, str) or not valid_identifier(session_id):
        raise BadRequest("session id %r is not an identifier (TJ-FAM-010)" % (session_id,))
    return os.path.join(os.path.abspath(root), "sessions", "state", session_id + ".json")


def _optional(**members: Any) -> dict[str, Any]:
    return {k: v for k, v in members.items() if v is not None}


class RunWriter:
    """The writer of one run file (seed 004, spec §7, §16), open under its lock. Every method appends one record and
    returns once it is durable (unless ``durability`` is ``none``); a call refused by a check writes nothing.

    Every method takes ``ts``: by default the time of writing; a caller may give the time it observed the event
    instead (an RFC 3339 string or an aware datetime, written in UTC; spec TJ-RUN-020). The invariants kept, so that
    a reader derives exactly what was written with no findings: one header, first (TJ-RUN-003/004); ``agent.event``
    seqs increasing from 0 (TJ-RUNSEM-010); every ``llm.response`` answers an open ``llm.request`` of its seq
    (TJ-RUNSEM-011); nothing after ``run.end`` (TJ-RUNSEM-002). A refusal raises TurnJournalError ``refused``
    (``run_ended`` after the end); bad arguments raise BadRequest. Not thread-safe."""

    def __init__(self, run_id: str, started_at: Timestamp, *, root: str | None = None, file: str | None = None,
                 session_id: str | None = None, client: Mapping[str, str] | None = None,
                 server: Mapping[str, str] | None = None, model: Mapping[str, Any] | None = None,
                 prompts: Mapping[str, Any] | None = None, tools: Mapping[str, Any] | None = None,
                 runtime: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
                 durability: Durability = "every", first_llm_seq: int = 1, lease_ms: int = DEFAULT_LEASE_MS):
        """Open the run file of ``run_id``: with ``root``, ``<root>/sessions/YYYY/MM/DD/<run_id>.jsonl`` by the UTC
        date of ``started_at`` (pass the same value to reopen it); or ``file``. A new (or empty) file gets the header
        before this returns (TJ-RUN-003); an existing file of the same run is continued (no second header, numbering
        after its highest seqs). Refused (BadRequest, nothing written) when the file belongs to another run or
        family or declares another ``schema_version``. ``first_llm_seq``: the seq of the first ``llm.request`` the
        writer numbers (seed 004 counts from 1; a session-wide counter passes its value, TJ-RUNSEM-009)."""
        if not isinstance(run_id, str) or not valid_identifier(run_id):
            raise BadRequest("run id %r is not an identifier (TJ-FAM-010)" % (run_id,))
        if not is_integer(first_llm_seq) or first_llm_seq < 0:
            raise BadRequest("first_llm_seq must be an integer >= 0")
        header: dict[str, Any] = {"type": "header", "schema_version": 1, "run_id": run_id}
        header.update(_optional(session_id=session_id))
        header["started_at"] = utc_timestamp(started_at, "started_at")
        header.update(_optional(client=_copy(client), server=_copy(server), model=_copy(model),
                                prompts=_copy(prompts), tools=_copy(tools), runtime=_copy(runtime),
                                meta=_copy(meta)))
        if not valid_def(header, "RunHeader"):
            raise BadRequest("the header is not a valid run header ($defs/RunHeader)")
        if (root is None) == (file is None):
            raise BadRequest("RunWriter needs exactly one of root and file")
        self.run_id = run_id
        self.path = run_file_path(root, run_id, started_at) if root is not None else os.path.abspath(file)  # type: ignore[arg-type]
        self._first_llm_seq = first_llm_seq
        self._file: AppendFile | None = AppendFile(self.path, durability, lease_ms)
        try:
            existing = self._read_existing()
            self.header_written = not existing
            self.resumed = bool(existing)
            if not existing:
                self._file.append(header)
        except BaseException:
            self._file.close()
            self._file = None
            raise

    def _read_existing(self) -> list[dict[str, Any]]:
        """The run's records already in the file (a restarted process continuing it), and its bookkeeping from them."""
        jf = read_journal_file(self.path, "tolerant", Findings())
        if jf.records and jf.family != "run":
            raise BadRequest("%s holds %s records, not a run" % (self.path, jf.family))
        records = [rec["obj"] for rec in jf.records]
        if jf.unsupported_file:
            raise BadRequest("%s declares a schema_version this writer does not write" % self.path)
        if records and records[0].get("run_id") != self.run_id:
            raise BadRequest("%s is the file of run %r, not %r" % (self.path, records[0].get("run_id"), self.run_id))
        agent = [r["seq"] for r in records if r.get("type") == "agent.event" and is_integer(r.get("seq"))]
        requests = [r["seq"] for r in records if r.get("type") == "llm.request" and is_integer(r.get("seq"))]
        responses = {r["seq"] for r in records if r.get("type") == "llm.response" and is_integer(r.get("seq"))}
        self.last_agent_seq: int | None = max(agent) if agent else None
        self._request_seqs = set(requests)
        self._open_requests = set(requests) - responses
        self.next_llm_seq = max([self._first_llm_seq] + [s + 1 for s in requests])
        self.ended = any(r.get("type") == "run.end" for r in records)
        return records

    @property
    def durability(self) -> Durability:
        """The durability mode in force (TJ-DUR-013)."""
        return self._writer().durability  # type: ignore[return-value]

    @property
    def open_llm_requests(self) -> list[int]:
        """The seqs of the ``llm.request`` records that have no ``llm.response`` yet, ascending."""
        return sorted(self._open_requests)

    def run_start(self, input: str | Mapping[str, Any], *, session_id: str | None = None, ui_context: Any = None,
                  meta: Mapping[str, Any] | None = None, ts: Timestamp | None = None) -> None:
        """``run.start``: the run's input; a string is shorthand for ``{"type": "text", "text": ...}`` (TJ-RUN-007)."""
        value = {"type": "text", "text": input} if isinstance(input, str) else _copy(input)
        self._write("run.start", dict(_optional(session_id=session_id), input=value,
                                      **_optional(ui_context=ui_context, meta=_copy(meta))), ts)

    def context(self, context_left_percent: float, *, meta: Mapping[str, Any] | None = None,
                ts: Timestamp | None = None) -> None:
        """``run.context``: the share of the model's context window left, in percent."""
        if isinstance(context_left_percent, bool) or not isinstance(context_left_percent, (int, float)) \
                or context_left_percent != context_left_percent or context_left_percent in (float("inf"), float("-inf")):
            raise BadRequest("context_left_percent must be a finite number")
        self._write("run.context", dict(context_left_percent=context_left_percent, **_optional(meta=_copy(meta))), ts)

    def agent_event(self, event: Mapping[str, Any], *, seq: int | None = None, meta: Mapping[str, Any] | None = None,
                    ts: Timestamp | None = None) -> int:
        """``agent.event``: a UI playback event (an object with a string ``type``, TJ-RUN-008), numbered from 0 in each
        run (TJ-RUNSEM-010); an explicit ``seq`` must exceed the previous (gaps are allowed). Returns its seq."""
        previous = self.last_agent_seq
        number = seq if seq is not None else (0 if previous is None else previous + 1)
        if not is_integer(number) or number < 0:
            raise BadRequest("agent.event seq must be an integer >= 0")
        if previous is not None and number <= previous:
            raise TurnJournalError("refused", "agent.event seq %d is not greater than the previous seq %d "
                                   "(agent_event_seq_regression, TJ-RUNSEM-007)" % (number, previous))
        self._write("agent.event", dict(seq=number, event=_copy(event), **_optional(meta=_copy(meta))), ts)
        self.last_agent_seq = number
        return number

    def tool_output(self, tool: str, tool_call_id: str, result_raw: str, *, is_error: bool | None = None,
                    output_ref: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
                    ts: Timestamp | None = None) -> None:
        """``tool.output``: the full output of one tool call."""
        self._write("tool.output", dict(tool=tool, tool_call_id=tool_call_id, result_raw=result_raw,
                                        **_optional(is_error=is_error, output_ref=_copy(output_ref),
                                                    meta=_copy(meta))), ts)

    def llm_request(self, input: Mapping[str, Any], *, seq: int | None = None, model: Mapping[str, Any] | None = None,
                    meta: Mapping[str, Any] | None = None, ts: Timestamp | None = None) -> int:
        """``llm.request``: one model invocation (``input`` holds ``messages``, TJ-RUN-009), numbered by the writer
        unless ``seq`` is given (any unused integer >= 0). It stays open until ``llm_response``. Returns its seq."""
        number = self.next_llm_seq if seq is None else seq
        if not is_integer(number) or number < 0:
            raise BadRequest("llm.request seq must be an integer >= 0")
        if number in self._request_seqs:
            raise TurnJournalError("refused", "an llm.request with seq %d was already written in this run "
                                   "(seq_duplicate, TJ-RUNSEM-006)" % number)
        self._write("llm.request", dict(seq=number, **_optional(model=_copy(model)), input=_copy(input),
                                        **_optional(meta=_copy(meta))), ts)
        self._request_seqs.add(number)
        self._open_requests.add(number)
        self.next_llm_seq = max(self.next_llm_seq, number + 1)
        return number

    def llm_response(self, seq: int, output: Mapping[str, Any], *, meta: Mapping[str, Any] | None = None,
                     ts: Timestamp | None = None) -> None:
        """``llm.response``: the answer to the open ``llm.request`` of the same seq (TJ-RUNSEM-011); one without an open
        request is refused (the reader would report ``unpaired_llm_response``)."""
        if not is_integer(seq) or seq < 0:
            raise BadRequest("llm.response seq must be an integer >= 0")
        if seq not in self._open_requests:
            raise TurnJournalError("refused", "%s (unpaired_llm_response, TJ-RUNSEM-005)" % (
                "the llm.request with seq %d is already answered" % seq if seq in self._request_seqs
                else "no llm.request with seq %d was written in this run" % seq))
        self._write("llm.response", dict(seq=seq, output=_copy(output), **_optional(meta=_copy(meta))), ts)
        self._open_requests.discard(seq)

    def status(self, status: str, *, message: str | None = None, meta: Mapping[str, Any] | None = None,
               ts: Timestamp | None = None) -> None:
        """``run.status``: a status change (``running``, ``awaiting_ui``, ``completed``, ``error``, ``cancelled``, or
        another string)."""
        self._write("run.status", dict(status=status, **_optional(message=message, meta=_copy(meta))), ts)

    def error(self, error: Mapping[str, Any], *, meta: Mapping[str, Any] | None = None,
              ts: Timestamp | None = None) -> None:
        """``run.error``: an error during the run (``name`` and ``message``, other members kept); it does not end it."""
        self._write("run.error", dict(error=_copy(error), **_optional(meta=_copy(meta))), ts)

    def end(self, outcome: str, *, final: str | None = None, meta: Mapping[str, Any] | None = None,
            ts: Timestamp | None = None) -> None:
        """``run.end``: the run's last record (TJ-RUN-011); every later call raises ``run_ended`` (TJ-RUNSEM-002)."""
        self._write("run.end", dict(outcome=outcome, **_optional(final=final, meta=_copy(meta))), ts)
        self.ended = True

    def append(self, type: str, fields: Mapping[str, Any] | None = None, *, ts: Timestamp | None = None) -> None:
        """A record of another type: ``x.<org>.<name>`` extensions (TJ-COMPAT-007) or a type a later version defines.
        The writer adds ``type``, ``run_id`` and ``ts``, which ``fields`` may not hold; a type v1 defines is validated
        against its schema, and the types with a method of their own are refused."""
        if not isinstance(type, str) or not type:
            raise BadRequest("a record type must be a non-empty string")
        if type in _DEDICATED:
            raise BadRequest('write "%s" records with %s' % (type, _DEDICATED[type]))
        body = dict(fields or {})
        for key in ("type", "run_id", "ts"):
            if key in body:
                raise BadRequest('the writer sets "%s"; fields may not hold it (pass ts=...)' % key)
        self._write(type, body, ts)

    def close(self) -> None:
        """fsync the file and release its lock; later calls raise."""
        if self._file is not None:
            file, self._file = self._file, None
            file.close()

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _writer(self) -> AppendFile:
        if self._file is None:
            raise TurnJournalError("failed", "the run writer of %s is closed" % self.path)
        return self._file

    def _write(self, type: str, fields: dict[str, Any], ts: Timestamp | None) -> None:
        writer = self._writer()
        if self.ended:
            raise TurnJournalError("run_ended", "run %s has ended (run.end is written); nothing may follow it "
                                   "(record_after_run_end, TJ-RUNSEM-002)" % self.run_id)
        stamp = _now() if ts is None else utc_timestamp(ts, "ts")
        writer.append(dict({"type": type, "run_id": self.run_id, "ts": stamp}, **fields))


def _copy(value: Any) -> Any:
    """A plain JSON copy of a caller's value (a Mapping becomes a dict), so later changes by the caller write nothing."""
    if value is None:
        return None
    return json.loads(json.dumps(value, default=_mapping))


def _mapping(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    raise BadRequest("%r is not a JSON value" % (value,))


@dataclass(frozen=True)
class StateWritten:
    """What ``write_state`` wrote: the document's path and the document, defaults filled in."""

    path: str
    state: dict[str, Any]


def write_state(state: Mapping[str, Any], *, root: str | None = None, session_id: str | None = None,
                file: str | None = None, updated_at: Timestamp | None = None,
                lease_ms: int = DEFAULT_LEASE_MS) -> StateWritten:
    """Replace a session's state snapshot (spec §8) atomically (TJ-STATE-005): a temporary file, fsync, rename, fsync
    of the directory, under the document's lock ``<file>.lock`` (raises TurnJournalError ``journal_locked`` while
    another live writer holds it). With ``root`` and ``session_id`` the document is
    ``<root>/sessions/state/<session_id>.json``; or give ``file``. ``state`` needs ``messages`` (objects with a string
    ``role``); ``schema_version`` (1), ``session_id`` and ``updated_at`` (``updated_at`` if given, else now, UTC) are
    filled in when absent. Give ``run_id`` and ``invoke_seq`` (the last ``llm.request`` it reflects) so that readers
    do not report it ``stale_state`` (TJ-STATE-006). A document that would not be valid is refused, nothing written."""
    if not isinstance(state, Mapping):
        raise BadRequest("the state must be a mapping")
    if root is not None and file is None:
        path = state_document_path(root, session_id)  # type: ignore[arg-type]
    elif file is not None and root is None and session_id is None:
        path = os.path.abspath(file)
    else:
        raise BadRequest("write_state needs root and session_id, or file")
    if session_id is not None and state.get("session_id", session_id) != session_id:
        raise BadRequest("the state names session %r, but it is written as session %r"
                         % (state.get("session_id"), session_id))
    document = dict(_copy(dict(state)))
    document.setdefault("schema_version", 1)
    if session_id is not None:
        document.setdefault("session_id", session_id)
    if "updated_at" not in document:
        document["updated_at"] = _now() if updated_at is None else utc_timestamp(updated_at, "updated_at")
    if not valid_def(document, "SessionState") or document["schema_version"] != 1:
        raise BadRequest("the state is not a valid v1 state document ($defs/SessionState: schema_version 1, "
                         "session_id, updated_at, messages of objects with a string role)")
    data = (json.dumps(document, ensure_ascii=True, indent=2, allow_nan=False) + "\n").encode("ascii")
    if len(data) > DOCUMENT_LIMIT:
        raise BadRequest("the state document is %d bytes, over the %d-byte document limit of readers "
                         "(TJ-STATE-003)" % (len(data), DOCUMENT_LIMIT))
    make_dirs(os.path.dirname(path))
    token = acquire_lock(path, lease_ms=lease_ms)
    try:
        atomic_replace(path, data)
    finally:
        release_lock(path, token)
    return StateWritten(path, document)
