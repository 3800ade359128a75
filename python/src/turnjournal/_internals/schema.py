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
    _COMPILED.clear()


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
    return _compile(s)(value)


def _always(value):
    return True


def _never(value):
    return False


_TYPES = {"object": dict, "array": list, "string": str, "null": type(None)}


def _type_check(t):
    """One predicate for a ``type`` keyword: Python types for the plain JSON types, is_number/is_integer for the
    numeric ones (bool is not a number in JSON), is bool for boolean."""
    names = t if isinstance(t, list) else [t]
    for name in names:
        if name not in _TYPES and name not in ("number", "integer", "boolean"):
            raise ValueError("unsupported schema type " + name)
    plain = tuple(_TYPES[n] for n in names if n in _TYPES)
    number, integer, boolean = "number" in names, "integer" in names, "boolean" in names

    def check(v):
        if plain and isinstance(v, plain) and not isinstance(v, bool):
            return True
        if boolean and isinstance(v, bool):
            return True
        return (number and is_number(v)) or (integer and is_integer(v))
    return check


def _compile(s):
    """Schema ``s`` as one predicate, built once (a record is checked against its $defs entry by calling it): what an
    interpreter of the schema decided keyword by keyword for every record, at a fraction of the cost. Keywords are
    checked in the order the spec's validator lists them; the result does not depend on the order."""
    if s is True:
        return _always
    if s is False:
        return _never
    checks = []
    if "$ref" in s:
        ref = s["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError("unsupported $ref " + ref)
        name = ref[len("#/$defs/"):]
        checks.append(lambda v: _compiled_def(name)(v))  # looked up when called: $defs may refer to each other
    if s.get("type") is not None:
        checks.append(_type_check(s["type"]))
    if "const" in s:
        const = s["const"]
        checks.append(lambda v: json_equal(v, const))
    if "enum" in s:
        members = s["enum"]
        checks.append(lambda v: any(json_equal(v, e) for e in members))
    if "minLength" in s:
        # JSON Schema counts code points; JSON strings may hold lone surrogates, each one unit.
        least = s["minLength"]
        checks.append(lambda v: not isinstance(v, str) or len(v) >= least)
    if "minimum" in s:
        low = s["minimum"]
        checks.append(lambda v: not is_number(v) or v >= low)
    if "maximum" in s:
        high = s["maximum"]
        checks.append(lambda v: not is_number(v) or v <= high or defects.MUTANT == "no-seq-limit")  # TJ-EVENT-018
    required = tuple(s.get("required", ()))
    properties = [(key, _compile(sub)) for key, sub in s.get("properties", {}).items()]
    patterns = [(re.compile(pattern), _compile(sub)) for pattern, sub in s.get("patternProperties", {}).items()]
    if required or properties or patterns:
        def check_object(v):
            if not isinstance(v, dict):
                return True
            for key in required:
                if key not in v:
                    return False
            for key, sub in properties:
                if key in v and not sub(v[key]):
                    return False
            for rx, sub in patterns:
                for key, member in v.items():
                    if rx.search(key) and not sub(member):
                        return False
            return True
        checks.append(check_object)
    if "items" in s:
        item = _compile(s["items"])
        checks.append(lambda v: not isinstance(v, list) or all(item(x) for x in v))
    if "allOf" in s:
        every = [_compile(sub) for sub in s["allOf"]]
        checks.append(lambda v: all(sub(v) for sub in every))
    if "anyOf" in s:
        some = [_compile(sub) for sub in s["anyOf"]]
        checks.append(lambda v: any(sub(v) for sub in some))
    if "oneOf" in s:
        one = [_compile(sub) for sub in s["oneOf"]]
        checks.append(lambda v: sum(1 for sub in one if sub(v)) == 1)
    if "not" in s:
        negated = _compile(s["not"])
        checks.append(lambda v: not negated(v))
    if "if" in s:
        condition = _compile(s["if"])
        then = _compile(s["then"]) if "then" in s else _always
        otherwise = _compile(s["else"]) if "else" in s else _always
        checks.append(lambda v: then(v) if condition(v) else otherwise(v))
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]

    def check_all(v):
        for check in checks:
            if not check(v):
                return False
        return True
    return check_all


_COMPILED = {}


def _compiled_def(name):
    """The predicate of ``$defs/<name>`` of the schema in use, compiled on first use."""
    check = _COMPILED.get(name)
    if check is None:
        check = _COMPILED[name] = _compile(schema()["$defs"][name])
    return check


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
    """True when ``value`` satisfies ``$defs/<name>`` of the schema in use."""
    return _compiled_def(name)(value)
