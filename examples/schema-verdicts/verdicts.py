#!/usr/bin/env python3
"""Reproduces turnjournal's validateRecord verdicts from schema.json alone (spec §9.6).

Uses a stock JSON Schema 2020-12 validator (the `jsonschema` package; on Debian:
apt-get install python3-jsonschema) and no turnjournal code. Two uses:

    verdicts.py --schema schema.json --fixtures fixtures/v1/records
        checks that every record fixture's expected status is what the table gives;
    verdicts.py --schema schema.json < records.jsonl
        prints one verdict per JSON line of stdin.

Exit 0 when every fixture agrees, 1 on a disagreement, 2 on a usage error.
"""

import argparse
import json
import os
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:  # pragma: no cover - depends on the machine
    sys.stderr.write("verdicts.py: needs the jsonschema package (Debian: apt-get install python3-jsonschema)\n")
    sys.exit(2)

_HERE = os.path.dirname(os.path.abspath(__file__))
# Where to look when --schema is not given, in order: beside this script, then the repository checkout around it.
SCHEMA_CANDIDATES = [
    os.path.join(_HERE, "schema.json"),
    os.path.join(_HERE, "..", "..", "spec", "v1", "schema.json"),
]
FIXTURE_CANDIDATES = [os.path.join(_HERE, "..", "..", "fixtures", "v1", "records")]


class Verdicts:
    """The verdict table of spec §9.6: the first row whose check holds decides."""

    def __init__(self, document):
        self.root = Draft202012Validator(document)
        self.unsupported = self._definition(document, "UnsupportedVersionRecord")
        self.extension = self._definition(document, "ExtensionRecord")
        self.unknown = self._definition(document, "UnknownRecord")

    @staticmethod
    def _definition(document, name):
        if name not in document.get("$defs", {}):
            raise KeyError("schema.json has no $defs/%s (a schema older than spec §9.6?)" % name)
        # Same $id and $defs, so the definition's local references resolve as they do in the document.
        wrapper = {"$schema": document["$schema"], "$defs": document["$defs"], "$ref": "#/$defs/" + name}
        if "$id" in document:
            wrapper["$id"] = document["$id"]
        return Draft202012Validator(wrapper)

    def verdict(self, value):
        if self.unsupported.is_valid(value):
            return "unsupported_version"
        if not self.root.is_valid(value):
            return "invalid"
        if self.extension.is_valid(value):
            return "extension"
        if self.unknown.is_valid(value):
            return "unknown"
        return "valid"


def first_existing(explicit, candidates, what, option):
    if explicit is not None:
        if not os.path.exists(explicit):
            sys.stderr.write("verdicts.py: %s not found: %s\n" % (what, explicit))
            sys.exit(2)
        return explicit
    for path in candidates:
        if os.path.exists(path):
            return path
    sys.stderr.write(
        "verdicts.py: cannot find %s; looked for %s; pass %s\n" % (what, ", ".join(candidates), option)
    )
    sys.exit(2)


def superseded_cases(directory):
    """Gold cases a later spec change outvoted (fixtures/superseded.json, beside v1/): every runner skips them."""
    path = os.path.join(directory, os.pardir, os.pardir, "superseded.json")
    if not os.path.exists(path):
        return set()
    with open(path, "rb") as f:
        listed = json.loads(f.read().decode("utf-8"))["cases"]
    return {(os.path.basename(entry["file"]), entry["case"]) for entry in listed if entry["file"].startswith("v1/records/")}


def check_fixtures(verdicts, directory):
    checked = failed = skipped = 0
    superseded = superseded_cases(directory)
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(directory, name), "rb") as f:
            fixture = json.loads(f.read().decode("utf-8"))
        for group in fixture["groups"]:
            for test in group["tests"]:
                if (name, "%s › %s" % (group["description"], test["description"])) in superseded:
                    skipped += 1
                    continue
                got = verdicts.verdict(test["record"])
                checked += 1
                if got != test["expect"]["status"]:
                    failed += 1
                    print("%s › %s › %s: expected %s, got %s"
                          % (name, group["description"], test["description"], test["expect"]["status"], got))
    print("%d record fixture(s), %d disagreement(s), %d superseded case(s) skipped" % (checked, failed, skipped))
    return 1 if failed or checked == 0 else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", help="path of schema.json (default: beside this script, or the repository's)")
    parser.add_argument("--fixtures", help="a directory of record fixture files (fixtures/v1/records)")
    parser.add_argument("--stdin", action="store_true", help="print the verdict of each JSON line of stdin")
    args = parser.parse_args(argv)
    with open(first_existing(args.schema, SCHEMA_CANDIDATES, "schema.json", "--schema"), "rb") as f:
        verdicts = Verdicts(json.loads(f.read().decode("utf-8")))
    if args.stdin:
        for line in sys.stdin:
            if line.strip():
                print(verdicts.verdict(json.loads(line)))
        return 0
    return check_fixtures(verdicts, first_existing(args.fixtures, FIXTURE_CANDIDATES, "the record fixtures", "--fixtures"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
