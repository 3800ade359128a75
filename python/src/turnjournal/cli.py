"""``python -m turnjournal check|audit|recover``: the TypeScript CLI's commands of the same names, with the same JSON
output (spec/v1/report.schema.json, spec/v1/recover.schema.json), for a team without Node."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from typing import Any, Sequence

from .recovery import plan_recovery, recover_store
from .report import check_store, spelled_as_given

USAGE_ERROR = 2


def _load_hooks(path: str) -> Any:
    """A Python file defining ensure_user_message(turn, submitted) and ensure_interruption_marker(turn)."""
    spec = importlib.util.spec_from_file_location("turnjournal_recovery_hooks", path)
    if spec is None or spec.loader is None:
        raise ValueError("cannot load hooks from %s" % path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("ensure_user_message", "ensure_interruption_marker"):
        if not callable(getattr(module, name, None)):
            raise ValueError("%s defines no function %s" % (path, name))
    return module


def _as_json_values(value: Any) -> Any:
    """Integral floats as integers (1778458500.0 as 1778458500): the same JSON value, printed as JSON.stringify
    prints it, so that the output is the TypeScript CLI's byte for byte."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, list):
        return [_as_json_values(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_json_values(v) for k, v in value.items()}
    return value


def _dump(value: Any) -> str:
    return json.dumps(_as_json_values(value), indent=2, ensure_ascii=False)


def _text(report: dict[str, Any]) -> str:
    lines = ["%s %s: %d file(s), %d record(s), %d turn(s); %d error, %d warn, %d info"
             % (report["command"], " ".join(report["paths"]), report["summary"]["files"], report["summary"]["records"],
                report["summary"]["turns"], *(report["summary"]["findings"][s] for s in ("error", "warn", "info")))]
    for f in report["findings"]:
        where = ":".join(str(f[k]) for k in ("file", "line") if k in f)
        lines.append("  %-5s %s %s%s" % (f["severity"], f["code"], where, (" " + f["message"]) if f["message"] else ""))
    for p in report.get("plan", []):
        lines.append("  plan  %s/%s (%s): %s" % (p["session_id"], p["turn_id"], p["state"], ", ".join(p["actions"])))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 clean, 1 error findings or recovery left incomplete, 2 usage)."""
    parser = argparse.ArgumentParser(prog="python -m turnjournal", description=__doc__)
    parser.add_argument("command", choices=("check", "audit", "recover"))
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--mode", choices=("tolerant", "prefix", "strict"), default="tolerant")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--apply", action="store_true", help="recover: perform the plan (default: print it)")
    parser.add_argument("--hooks", help="recover --apply: a Python file defining ensure_user_message(turn, "
                                        "submitted) and ensure_interruption_marker(turn), both idempotent")
    parser.add_argument("--journal-only", action="store_true",
                        help="recover --apply: the store has no host transcript; only close the journals")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return USAGE_ERROR if exit_.code else 0
    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:
        print("python -m turnjournal %s: no such file or directory: %s" % (args.command, missing[0]), file=sys.stderr)
        return USAGE_ERROR
    if args.command in ("check", "audit"):
        report = check_store(args.paths, args.mode, audit=args.command == "audit")
        print(_dump(report) if args.format == "json" else _text(report))
        return 1 if report["summary"]["findings"]["error"] else 0
    if len(args.paths) != 1:
        print("python -m turnjournal recover: give one store root", file=sys.stderr)
        return USAGE_ERROR
    if args.apply and not args.hooks and not args.journal_only:
        print("python -m turnjournal recover --apply: give --hooks <file.py> (your host transcript) or "
              "--journal-only", file=sys.stderr)
        return USAGE_ERROR
    try:
        hooks = _load_hooks(args.hooks) if args.apply and args.hooks else None
    except (OSError, ValueError, SyntaxError) as error:
        print("python -m turnjournal recover: %s" % error, file=sys.stderr)
        return USAGE_ERROR
    recovery = recover_store(args.paths[0], hooks) if args.apply else plan_recovery(args.paths[0])
    out = recovery.to_json()
    shown = spelled_as_given(args.paths)
    out["held_files"] = [shown(f) for f in out["held_files"]]
    for log in out["event_logs"]:
        log["file"] = shown(log["file"])
    for done in out["settled"]:
        done["file"] = shown(done["file"])
    if args.format == "json":
        print(_dump(out))
    else:
        for p in out["plan"]:
            print("%s %s/%s (%s): %s" % ("recovered" if args.apply else "plan", p["session_id"], p["turn_id"],
                                         p["state"], ", ".join(a["kind"] for a in p["actions"])))
        for held in out["held_files"]:
            print("held by a live writer, left alone: %s" % held)
        for done in out["settled"]:
            print("left plain JSONL at rest: %s" % done["file"])
    return 0 if not args.apply or out["complete"] else 1
