"""Store discovery (spec §4.2, §4.4, §4.5): which files of a directory are journals."""

import os
import re
import stat

from . import defects
from .records import valid_identifier


# ---------------------------------------------------------------------------
# Store discovery (spec §4.2, §4.4, §4.5)
# ---------------------------------------------------------------------------

RESERVED = [
    re.compile(r".*\.lock"),
    re.compile(r".*\.lock\.takeover"),
    re.compile(r"\.turnjournal-sweep\.lock"),
    re.compile(r"\..+\.tmp"),
    re.compile(r".+\.[0-9]+\.torn"),
]
DAY_DIRS = re.compile(r"^[0-9]+/[0-9]+/[0-9]+$")


def is_reserved(name):
    return any(rx.fullmatch(name) for rx in RESERVED)


def layout_hint(path):
    parts = path.split(os.sep)
    name = parts[-1]
    if len(parts) >= 2 and parts[-2] == "_turn_journal":
        return "turn"
    if name == "events.jsonl":
        return "event"
    if len(parts) >= 5 and parts[-5] == "sessions" and DAY_DIRS.match("/".join(parts[-4:-1])):
        return "run"
    return None


def discover(paths, findings):
    """Expand the paths into (kind, path): kind 'jsonl' or 'state'."""
    out = []
    for given in paths:
        given = os.path.abspath(given)
        if os.path.isdir(given):
            for dirpath, dirnames, filenames in os.walk(given):
                dirnames.sort()
                for name in sorted(filenames):
                    full = os.path.join(dirpath, name)
                    if is_reserved(name) and defects.MUTANT == "reserved-scanned":
                        findings.add("unrecognised_file", full)  # defect switch: TJ-FAM-020
                    if is_reserved(name) or not (name.endswith(".jsonl") or name.endswith(".json")):
                        continue  # TJ-FAM-020; other names are not the store's
                    # lstat: a link found in a store is never followed (TJ-FAM-025), a FIFO never opened (TJ-FAM-024).
                    mode = os.lstat(full).st_mode
                    follows = defects.MUTANT == "reader-follows-links" and stat.S_ISLNK(mode) and os.path.isfile(full)
                    opens = defects.MUTANT == "reader-opens-fifo" and stat.S_ISFIFO(mode)
                    if not stat.S_ISREG(mode) and not follows and not opens:  # defect switches: TJ-FAM-025, -024
                        findings.add("special_file", full)
                        continue
                    if name.endswith(".jsonl"):
                        out.append(("jsonl", full))
                        if os.path.basename(dirpath) == "_turn_journal" and "~" in name:
                            shard = name[: -len(".jsonl")].split("~", 1)[1]
                            if not valid_identifier(shard):
                                findings.add("unrecognised_file", full, reason="shard name is not an identifier")
                    elif name.endswith(".json"):
                        if os.path.basename(dirpath) == "state":
                            out.append(("state", full))
                        else:
                            findings.add("unrecognised_file", full)  # TJ-FAM-008
        elif os.path.exists(given) and not stat.S_ISREG(os.stat(given).st_mode):
            findings.add("special_file", given)  # TJ-FAM-024: given explicitly (a link to a regular file is followed)
        elif given.endswith(".json"):
            out.append(("state", given))
        else:
            out.append(("jsonl", given))
    # One order for every reader: by full path (the order findings of duplicates depend on).
    out.sort(key=lambda item: item[1])
    return out
