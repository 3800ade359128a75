"""Reading one JSONL file: classification, versions and validation of its records (spec §4, §9)."""

import re

from . import defects
from .discovery import layout_hint
from .event_fold import EventFold
from .framing import read_jsonl
from .records import ENVELOPES, EVENT_DEFS, EXTENSION, LAX, RUN_DEFS, StrictFailure, TURN_DEFS, classify, valid_identifier
from .run_fold import RunFold
from .schema import _schema_members, is_integer, valid_def


# ---------------------------------------------------------------------------
# Reading one JSONL file: classification, version, validation (§4, §9)
# ---------------------------------------------------------------------------


class JournalFile:
    def __init__(self, path, findings=None):
        self.path = path
        self.findings = findings
        self.family = None  # decided by the first record of a family, else the layout hint
        self.mixed_reported = False
        self.records = []  # accepted records of the file's family: dicts with obj, type, line, offset, raw
        self.unsupported_file = False
        self.header_checked = False
        self.damage_lines = []  # lines yielding malformed_line/zero_filled_region/oversized_line/invalid_record
        self.damage_offsets = {}  # line -> its offset, for reports
        self.parsed = 0  # JSON objects read, valid or not (a report's record count)
        self.strict_failure = None  # the finding a strict-mode read of this file stopped at
        self.accepted_seqs = []  # event family: seqs of the records the fold accepted, in file order
        self.routed = False  # some record of the file's family reached the fold (accepted or not)
        self.accepted = 0  # records accepted so far (kept or folded)
        self.stream = False  # fold event and run records while reading instead of keeping them (TJ-FRAME-033)
        self.fold = None  # the streaming fold of an event log or run file, created by its first accepted record

    def accept(self, rec):
        """Take an accepted record: kept in ``records``, or, when streaming, folded at once and dropped, so that the
        memory of a read follows the derived state, not the file (TJ-FRAME-033). A turn file keeps its records (they are
        the fold's input across shards) but not its unknown and extension records, which the fold ignores."""
        self.accepted += 1
        if not self.stream or defects.MUTANT == "records-kept":  # defect switch: TJ-FRAME-033 (every record held)
            self.records.append(rec)
        elif self.family == "event":
            if self.fold is None:
                self.fold = EventFold(self.path, self.findings)
            self.fold.feed(rec)
        elif self.family == "run":
            if self.fold is None:
                self.fold = RunFold(self.path, self.findings)
            self.fold.feed(rec)
        elif not rec.get("unknown") or defects.MUTANT == "extension-event-counts":
            self.records.append(rec)


def read_journal_file(path, mode, findings, stream=False):
    """Read one JSONL file. With ``stream``, event and run records are folded as they are read (the store read);
    without, every accepted record is kept in ``records`` for callers that rewrite or append to the file."""
    jf = JournalFile(path, findings)
    jf.stream = stream
    mark = len(findings.items)

    def invalid(line_no, offset, reason):
        f = findings.add("invalid_record", path, line_no, offset, reason=reason)
        if mode == "strict":
            raise StrictFailure(f)

    def on_record(obj, line_no, offset, raw):
        jf.parsed += 1
        family, rtype = classify(obj)
        if jf.unsupported_file and family != "run" and family in ("turn", "event", "state"):
            _mixed(line_no, offset)
            return
        if jf.unsupported_file:
            return  # TJ-COMPAT-012: records after a header of another version are not judged by v1 rules
        if family == "bad":  # rule 7, TJ-FAM-023
            if defects.MUTANT == "bad-discriminator-ignored":
                return  # defect switch: TJ-FAM-023
            invalid(line_no, offset, "discriminator is not a string")
            return
        if family is None:
            if (rtype is None or not EXTENSION.match(rtype)) and defects.MUTANT != "no-unknown-object":  # switch: TJ-FAM-002
                findings.add("unknown_record", path, line_no, offset)  # TJ-FAM-002
            return
        if family == "state":
            if defects.MUTANT != "state-line-silent":  # defect switch: TJ-FAM-009
                _mixed(line_no, offset)  # TJ-FAM-009: a JSONL file is never a state document
            return
        if jf.family is None:
            jf.family = family
        elif family != jf.family:
            _mixed(line_no, offset)  # TJ-FAM-006/007
            if defects.MUTANT != "mixed-records-kept":  # defect switch: TJ-FAM-007
                return
        jf.routed = True
        if jf.unsupported_file:
            return  # TJ-COMPAT-012
        if defects.MUTANT in LAX and LAX[defects.MUTANT](family, rtype, obj):
            jf.accept({"obj": obj, "type": rtype, "line": line_no, "offset": offset, "raw": raw})
            return  # defect switch: the rule named in LAX
        # Versions before types (TJ-COMPAT-014).
        if defects.MUTANT == "type-before-version" and family == "turn" and rtype not in TURN_DEFS \
                and not EXTENSION.match(rtype):
            findings.add("unknown_record", path, line_no, offset)  # defect switch: TJ-COMPAT-014
            return
        if family == "turn":
            if "version" not in obj or not is_integer(obj["version"]):
                invalid(line_no, offset, "version missing or not an integer")  # TJ-COMPAT-013
                return
            if obj["version"] != 1:
                findings.add("unsupported_version", path, line_no, offset)  # TJ-COMPAT-011
                return
        elif family == "event":
            if "version" in obj:
                if not is_integer(obj["version"]):
                    invalid(line_no, offset, "version not an integer")
                    return
                if obj["version"] != 1:
                    findings.add("unsupported_version", path, line_no, offset)
                    return
        elif family == "run" and rtype == "header":
            sv = obj.get("schema_version")
            if "schema_version" in obj and not is_integer(sv):
                invalid(line_no, offset, "schema_version not an integer")
                return
            if is_integer(sv) and sv != 1 and jf.family == "run" and not jf.accepted:
                jf.unsupported_file = True
                findings.add("unsupported_version", path, line_no, offset)
                return
        defs = {"turn": TURN_DEFS, "event": EVENT_DEFS, "run": RUN_DEFS}[family]
        if defects.MUTANT == "turn-id-identifier-only" and family == "turn" and isinstance(obj.get("turn_id"), str) \
                and not valid_identifier(obj["turn_id"]):
            invalid(line_no, offset, "turn_id is not an identifier")  # defect switch: TJ-TURN-005
            return
        if defects.MUTANT == "closed-reason-enum" and rtype == "interrupted" and obj.get("reason") not in (
                "error", "cancelled", "server_startup_recovery", "timeout"):
            invalid(line_no, offset, "unknown reason")  # defect switch: TJ-COMPAT-009
            return
        if defects.MUTANT == "strict-timestamps" and family == "run" and isinstance(obj.get("ts"), str) and not re.fullmatch(
                r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", obj["ts"]):
            invalid(line_no, offset, "ts is not RFC 3339")  # defect switch: TJ-FAM-022
            return
        if defects.MUTANT == "reject-unknown-members" and any(k not in _schema_members() for k in obj):
            invalid(line_no, offset, "unknown member")  # defect switch: TJ-COMPAT-001
            return
        if rtype in defs:
            if not valid_def(obj, defs[rtype]) and defects.MUTANT != "schema-not-checked":  # defect switch: TJ-COMPAT-017
                invalid(line_no, offset, "fails $defs/" + defs[rtype])  # TJ-COMPAT-017
                if defects.MUTANT == "invalid-checkpoint-resets" and rtype == "checkpoint":  # defect switch: TJ-REPLAY-008
                    jf.accept({"obj": dict(obj, payload={"messages": []}), "type": rtype, "line": line_no,
                                       "offset": offset, "raw": raw})
                return
            if defects.MUTANT == "role-required" and rtype == "submitted" and "role" not in obj:  # defect switch: TJ-TURN-016
                invalid(line_no, offset, "submitted without role")
                return
            jf.accept({"obj": obj, "type": rtype, "line": line_no, "offset": offset, "raw": raw})
            return
        if not valid_def(obj, ENVELOPES[family]):
            invalid(line_no, offset, "fails $defs/" + ENVELOPES[family])
            return
        if defects.MUTANT == "reject-unknown-type":
            invalid(line_no, offset, "unknown type")  # defect switch: TJ-COMPAT-005
            return
        if not EXTENSION.match(rtype) or defects.MUTANT == "extension-reported":  # defect switch: TJ-COMPAT-006
            findings.add("unknown_record", path, line_no, offset)  # TJ-COMPAT-005
        # Unknown and extension records stay for the event-log seq checks (§6.5) and run ordering.
        jf.accept({"obj": obj, "type": rtype, "line": line_no, "offset": offset, "raw": raw, "unknown": True})

    def _mixed(line_no, offset):
        if not jf.mixed_reported and defects.MUTANT != "no-mixed-families":  # defect switch: TJ-FAM-006
            jf.mixed_reported = True
            findings.add("mixed_families", path, line_no, offset)

    if defects.MUTANT == "family-from-name" and layout_hint(path) is None:
        findings.add("unrecognised_file", path)  # defect switch: TJ-FAM-005, TJ-FAM-004
        return jf
    try:
        read_jsonl(path, mode, findings, on_record)
    except StrictFailure as failure:
        # A strict read of this file failed: the file yields nothing but the failure (TJ-FRAME-022/023).
        jf.strict_failure = failure.finding
        if defects.MUTANT == "strict-failure-no-line":  # defect switch: TJ-FRAME-023
            jf.strict_failure = {k: v for k, v in failure.finding.items() if k not in ("line", "offset")}
        del findings.items[mark:]
        findings.items.append(jf.strict_failure)
        jf.records = []
        jf.fold = None
        jf.family = None
        jf.routed = False
        jf.damage_lines = []
        jf.damage_offsets = {}
    if jf.family is None:
        jf.family = layout_hint(path)
        if jf.family is None:
            findings.add("unrecognised_file", path)  # TJ-FAM-005
    for f in findings.items[mark:]:
        if f.get("file") == path and f["code"] in ("malformed_line", "zero_filled_region", "oversized_line",
                                                   "invalid_record") \
                and "line" in f:
            jf.damage_lines.append(f["line"])
            jf.damage_offsets.setdefault(f["line"], f.get("offset"))
    return jf
