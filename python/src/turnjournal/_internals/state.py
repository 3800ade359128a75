"""State documents (spec §8)."""

import os

from . import defects
from .framing import _parse_object
from .records import StrictFailure, valid_identifier
from .schema import BOM, DOCUMENT_LIMIT, is_integer, valid_def


# ---------------------------------------------------------------------------
# State documents (spec §8)
# ---------------------------------------------------------------------------


def read_state(path, mode, findings):
    name = os.path.basename(path)
    sid = name[: -len(".json")] if name.endswith(".json") else name
    if not valid_identifier(sid):
        findings.add("invalid_session_id", path)  # TJ-FAM-012
    size = os.path.getsize(path)
    obj = None
    if size <= DOCUMENT_LIMIT:
        with open(path, "rb") as f:
            data = f.read()
        if data.startswith(BOM) and defects.MUTANT != "state-bom-rejected":  # defect switch: TJ-STATE-002
            data = data[3:]
        obj = _parse_object(data)
    if obj is None and defects.MUTANT == "malformed-state-raises" and mode != "strict":
        raise ValueError("malformed state document " + path)  # defect switch: TJ-STATE-004
    if obj is None and defects.MUTANT == "malformed-state-silent":
        return None  # defect switch: TJ-STATE-003
    if obj is None:
        f = findings.add("malformed_document", path)  # TJ-STATE-003
        if mode == "strict":
            raise StrictFailure(f)
        return None
    sv = obj.get("schema_version")
    if is_integer(sv) and sv != 1:
        findings.add("unsupported_version", path)
        return None
    if not valid_def(obj, "SessionState") and defects.MUTANT != "lax-state":  # defect switch: TJ-STATE-001
        f = findings.add("invalid_record", path)
        if mode == "strict":
            raise StrictFailure(f)
        return None
    return obj
