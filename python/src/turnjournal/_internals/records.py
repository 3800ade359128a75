"""Record families and types (spec §4.1, §5-§8), identifiers, and the findings list."""

import re

from . import defects


# ---------------------------------------------------------------------------
# Families and record types (spec §4.1, §5-§8)
# ---------------------------------------------------------------------------

TURN_DEFS = {
    "submitted": "TurnSubmitted",
    "worker_started": "TurnWorkerStarted",
    "assistant_started": "TurnAssistantStarted",
    "completed": "TurnCompleted",
    "interrupted": "TurnInterrupted",
    "compacted": "TurnCompacted",
}
RUN_DEFS = {
    "header": "RunHeader",
    "run.start": "RunStart",
    "run.context": "RunContext",
    "agent.event": "RunAgentEvent",
    "tool.output": "RunToolOutput",
    "llm.request": "RunLlmRequest",
    "llm.response": "RunLlmResponse",
    "run.status": "RunStatus",
    "run.error": "RunError",
    "run.end": "RunEnd",
}
EVENT_DEFS = {
    "message_append": "EventMessageAppend",
    "message_edit": "EventMessageEdit",
    "undo": "EventUndo",
    "checkpoint": "EventCheckpoint",
    "checkpoint.part": "EventCheckpointPart",
    "chat.started": "EventChatStarted",
    "assistant.segment.started": "EventAssistantSegmentStarted",
    "chat.delta": "EventChatDelta",
    "tool.start": "EventToolStart",
    "tool.end": "EventToolEnd",
    "tool.result": "EventToolResult",
    "chat.done": "EventChatDone",
    "chat.error": "EventChatError",
    "chat.cancelled": "EventChatCancelled",
    "delivery.ack": "EventDeliveryAck",
}
ENVELOPES = {"turn": "TurnEnvelope", "event": "EventEnvelope", "run": "RunEnvelope"}
EXTENSION = re.compile(r"^x\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$")
IDENTIFIER = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
STREAM_TYPES = ("chat.started", "assistant.segment.started", "chat.delta", "tool.start", "tool.end", "tool.result",
                "chat.done", "chat.error", "chat.cancelled", "delivery.ack")
# Defect switches that accept a record missing one required member (each breaks the rule named beside it).
LAX = {
    "lax-turn-version": lambda fam, t, o: fam == "turn" and "version" not in o,  # TJ-TURN-001
    "lax-turn-id": lambda fam, t, o: fam == "turn" and t != "compacted" and "turn_id" not in o,  # TJ-TURN-002
    "lax-submitted": lambda fam, t, o: t == "submitted" and ("content" not in o or "session_id" not in o),  # TURN-007
    "lax-interrupted": lambda fam, t, o: t == "interrupted" and "reason" not in o,  # TJ-TURN-008
    "lax-compacted": lambda fam, t, o: t == "compacted" and "removed_turns" not in o,  # TJ-TURN-009
    "lax-event-payload": lambda fam, t, o: fam == "event" and t in EVENT_DEFS and t != "undo"
    and not isinstance(o.get("payload"), dict),  # TJ-EVENT-002
    "lax-stream-request-id": lambda fam, t, o: t in STREAM_TYPES and isinstance(o.get("payload"), dict)
    and "request_id" not in o["payload"],  # TJ-EVENT-008
    "lax-run-ts": lambda fam, t, o: fam == "run" and t != "header" and "ts" not in o,  # TJ-RUN-002
    "lax-header": lambda fam, t, o: t == "header" and ("schema_version" not in o or "started_at" not in o),  # RUN-006
    "lax-run-end": lambda fam, t, o: t == "run.end" and "outcome" not in o,  # TJ-RUN-011
    "lax-event-ts": lambda fam, t, o: fam == "event" and "ts" not in o,  # TJ-EVENT-001
    "lax-message-edit": lambda fam, t, o: t == "message_edit" and isinstance(o.get("payload"), dict)
    and "messages" not in o["payload"] and "message" not in o["payload"],  # TJ-EVENT-005
    "lax-run-id": lambda fam, t, o: fam == "run" and t != "header" and "run_id" not in o,  # TJ-RUN-001
    "lax-run-start-input": lambda fam, t, o: t == "run.start" and isinstance(o.get("input"), dict)
    and "type" not in o["input"],  # TJ-RUN-007
    "lax-agent-event": lambda fam, t, o: t == "agent.event" and isinstance(o.get("event"), dict)
    and "type" not in o["event"],  # TJ-RUN-008
    "lax-llm-request": lambda fam, t, o: t == "llm.request" and isinstance(o.get("input"), dict)
    and "messages" not in o["input"],  # TJ-RUN-009
    "lax-llm-response": lambda fam, t, o: t == "llm.response" and isinstance(o.get("output"), dict)
    and "messages" not in o["output"],  # TJ-RUN-010
}
RANK = {"submitted": 0, "worker_started": 1, "assistant_started": 2, "completed": 3, "interrupted": 3}
FINISHING = ("chat.done", "chat.error", "chat.cancelled")


def valid_identifier(s):
    """Spec §4.3. ``$`` in Python regexes matches before a final LF, so use fullmatch."""
    return isinstance(s, str) and IDENTIFIER.fullmatch(s) is not None and s not in (".", "..")


def classify(obj):
    """Spec §4.1: (family, type); family is turn|event|run|state|None|'bad' (rule 7)."""
    has_type = "type" in obj
    has_event = "event" in obj
    if not has_type and has_event and isinstance(obj["event"], str):
        return "turn", obj["event"].lower() if defects.MUTANT == "type-case-insensitive" else obj["event"]  # TJ-FAM-003
    if not has_type and not has_event and "schema_version" in obj:
        return "state", None
    if has_type and isinstance(obj["type"], str):
        t = obj["type"].lower() if defects.MUTANT == "type-case-insensitive" else obj["type"]  # switch: TJ-FAM-003
        if defects.MUTANT == "run-id-before-type" and "run_id" not in obj and "seq" not in obj:
            return None, t  # defect switch: TJ-FAM-001 (rule 5's members asked before rules 3 and 4)
        if t in RUN_DEFS:
            return "run", t
        if t in EVENT_DEFS:
            return "event", t
        if "run_id" in obj:
            return "run", t
        if "seq" in obj:
            return "event", t
        return None, t
    if not has_type and not has_event:
        return None, None
    return "bad", None


# ---------------------------------------------------------------------------
# Findings
# ---------------------------------------------------------------------------


class StrictFailure(Exception):
    """Raised in strict mode at the first damaged line or invalid record (TJ-FRAME-022/023)."""

    def __init__(self, finding):
        super().__init__("%s in %s line %s at byte %s" % (
            finding["code"], finding.get("file"), finding.get("line"), finding.get("offset")))
        self.finding = finding


class Findings:
    def __init__(self):
        self.items = []
        self.line_offsets = []  # filled by the "offset-index" defect switch only (TJ-FRAME-033)

    def add(self, code, file=None, line=None, offset=None, turn_id=None, **extra):
        f = {"code": code.replace("_", "-") if defects.MUTANT == "kebab-codes" else code}  # defect switch: TJ-AUDIT-001
        if file is not None:
            f["file"] = file
        if line is not None and defects.MUTANT != "findings-without-line":  # defect switch: TJ-AUDIT-003
            f["line"] = line
        if offset is not None:
            f["offset"] = offset
        if turn_id is not None:
            f["turn_id"] = turn_id
        f.update(extra)
        self.items.append(f)
        return f
