"""The v1 JSON Schema (bundled schema.json) and the small validator for the subset of keywords it uses."""

import json
import os
import re

from . import defects


LINE_LIMIT = 16 * 1024 * 1024  # TJ-FRAME-031
READ_LIMIT = [LINE_LIMIT]  # the reader's limit; `read` may lower it with max_line_bytes (adapter.md §4.2)
DOCUMENT_LIMIT = 64 * 1024 * 1024  # TJ-STATE-003
CHUNK = 1024 * 1024


BOM = b"\xef\xbb\xbf"
JSON_WS = b" \t\r\n"

# ---------------------------------------------------------------------------
# JSON Schema subset (spec/v1/schema.json)
# ---------------------------------------------------------------------------

# The v1 schema ships inside the package (turnjournal/v1/schema.json, a generated copy of spec/v1/schema.json that
# `pnpm run check:generated` keeps fresh); use_schema() points the validator at another copy.
BUNDLED_SCHEMA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "v1", "schema.json")
_SCHEMA = None
_MEMBERS = []


def use_schema(path):
    """Validate records against the schema.json at ``path`` from now on (it is read at once; OSError or ValueError
    when it cannot be read or is not JSON)."""
    global _SCHEMA
    with open(path, "rb") as f:
        loaded = json.loads(f.read().decode("utf-8"))
    if not isinstance(loaded, dict) or not isinstance(loaded.get("$defs"), dict):
        raise ValueError("%s is not the turnjournal v1 schema (no $defs)" % path)
    _SCHEMA = loaded
    del _MEMBERS[:]


def schema():
    """The schema records are validated against: the bundled one unless use_schema() named another."""
    if _SCHEMA is None:
        use_schema(BUNDLED_SCHEMA)
    return _SCHEMA


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_integer(v):
    # Spec §4.6: an integer is a number with no fractional part; 1.0 is the integer 1.
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and v == v and v not in (float("inf"), float("-inf")) and v.is_integer()


def _type_ok(v, t):
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    if t == "string":
        return isinstance(v, str)
    if t == "number":
        return is_number(v)
    if t == "integer":
        return is_integer(v)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    raise ValueError("unsupported schema type " + t)


def json_equal(a, b):
    """Equality of JSON values (spec §4.6): numbers by value, objects in any order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def valid(value, s):
    """True when ``value`` satisfies schema ``s`` (the subset schema.json uses)."""
    if s is True:
        return True
    if s is False:
        return False
    if "$ref" in s:
        ref = s["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError("unsupported $ref " + ref)
        if not valid(value, schema()["$defs"][ref[len("#/$defs/"):]]):
            return False
    t = s.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_type_ok(value, x) for x in types):
            return False
    if "const" in s and not json_equal(value, s["const"]):
        return False
    if "enum" in s and not any(json_equal(value, e) for e in s["enum"]):
        return False
    if isinstance(value, str) and "minLength" in s:
        # JSON Schema counts code points; JSON strings may hold lone surrogates, each one unit.
        if len(value) < s["minLength"]:
            return False
    if is_number(value) and "minimum" in s and value < s["minimum"]:
        return False
    if is_number(value) and "maximum" in s and value > s["maximum"] and defects.MUTANT != "no-seq-limit":  # TJ-EVENT-018
        return False
    if isinstance(value, dict):
        for key in s.get("required", ()):
            if key not in value:
                return False
        for key, sub in s.get("properties", {}).items():
            if key in value and not valid(value[key], sub):
                return False
        for pattern, sub in s.get("patternProperties", {}).items():
            rx = re.compile(pattern)
            for key, v in value.items():
                if rx.search(key) and not valid(v, sub):
                    return False
    if isinstance(value, list) and "items" in s:
        if not all(valid(v, s["items"]) for v in value):
            return False
    if "allOf" in s and not all(valid(value, sub) for sub in s["allOf"]):
        return False
    if "anyOf" in s and not any(valid(value, sub) for sub in s["anyOf"]):
        return False
    if "oneOf" in s and sum(1 for sub in s["oneOf"] if valid(value, sub)) != 1:
        return False
    if "not" in s and valid(value, s["not"]):
        return False
    if "if" in s:
        if valid(value, s["if"]):
            if "then" in s and not valid(value, s["then"]):
                return False
        elif "else" in s and not valid(value, s["else"]):
            return False
    return True


def _schema_members():
    """Every member name schema.json defines anywhere (for the reject-unknown-members defect switch)."""
    if not _MEMBERS:
        found = set()
        stack = [schema()]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                found.update(node.get("properties", {}).keys())
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        _MEMBERS.append(found)
    return _MEMBERS[0]


def valid_def(value, name):
    return valid(value, {"$ref": "#/$defs/" + name})
