"""``python -m turnjournal check|audit|recover`` prints the reports of the published JSON schemas
(spec/v1/report.schema.json, spec/v1/recover.schema.json; Debian's python3-jsonschema validates them), the same as
the TypeScript CLI's on the same store (node packages/conformance/dist/cli/main.js, built by ``npm run bootstrap``)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
TS_CLI = os.path.join(REPO, "packages", "conformance", "dist", "cli", "main.js")
ENV = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python", "src"))


def schema(name):
    with open(os.path.join(REPO, "spec", "v1", name)) as f:
        return json.load(f)


def python_cli(*args, cwd):
    proc = subprocess.run([sys.executable, "-m", "turnjournal"] + list(args) + ["--format", "json"], cwd=cwd,
                          env=ENV, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def typescript_cli(*args, cwd):
    if shutil.which("node") is None or not os.path.isfile(TS_CLI):
        raise AssertionError("the TypeScript CLI is needed to compare with: %s (run npm run bootstrap)" % TS_CLI)
    proc = subprocess.run(["node", TS_CLI] + list(args) + ["--format", "json"], cwd=cwd, capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def without_messages(report):
    """The report with each finding's prose left out (the wording is each CLI's own; codes, severities and places
    are compared) and findings in one order."""
    out = dict(report)
    out["findings"] = sorted(({k: v for k, v in f.items() if k != "message"} for f in report["findings"]),
                             key=lambda f: json.dumps(f, sort_keys=True))
    return out


DAMAGED = {
    "_turn_journal/s1.jsonl":
        b'{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":1.5,"content":"' +
        b"x" * 200 + b'"}\n'
        b"not json\n"
        b"\n"
        b'{"version":1,"event":"worker_started","turn_id":"t1","created_at":2}\n'
        b'{"version":1,"event":"worker_started","turn_id":"t1","created_at":2}\n'
        b'{"version":1,"event":"completed","turn_id":"t2","created_at":3}\n'
        b'{"version":1,"event":"x.acme.note","turn_id":"t1"}\n'
        b'{"version":1,"event":"compl{"version":1,"event":"interrupted","turn_id":"t1","created_at":4,"reason":"cancelled"}\n'
        b'{"version":1,"event":"completed","turn_id":"t1","created_at":5}\n',
    "_turn_journal/s2~7.jsonl":
        b'{"version":1,"event":"submitted","turn_id":"t9","session_id":"s2","created_at":9,"content":"hi",'
        b'"attachments":[{"name":"a","path":"/a","mime":"text/plain"}]}\n{"version":1,"ev',
    "c1/events.jsonl":
        b'{"seq":0,"ts":"2026-01-01T00:00:00Z","type":"message_append","payload":{"message":{"role":"user"}}}\n'
        b'{"seq":2,"ts":"2026-01-01T00:00:01Z","type":"chat.started","payload":{"request_id":"r1"}}\n'
        b'{"seq":3,"ts":"2026-01-01T00:00:02Z","type":"undo","payload":{"n":5}}\n',
    "sessions/2026/01/02/run-1.jsonl":
        b'{"type":"run.start","run_id":"run-1","ts":"2026-01-02T00:00:00Z","input":{"type":"text","text":"q"}}\n'
        b'{"type":"llm.request","run_id":"run-1","ts":"2026-01-02T00:00:01Z","seq":1,"input":{"messages":[]}}\n'
        b'{"type":"run.status","run_id":"run-1","ts":"2026-01-02T00:00:02Z","status":"waiting"}\n',
    "sessions/state/s9.json": b'{"schema_version":1,"session_id":"s9","updated_at":"x","messages":[{"role":"user"}]}',
}


class Reports(unittest.TestCase):
    def test_the_example_store_gives_the_typescript_clis_reports_byte_for_byte(self):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(REPO, "examples", "store"), os.path.join(tmp, "store"))
            for command, name in (("check", "report.schema.json"), ("audit", "report.schema.json"),
                                  ("recover", "recover.schema.json")):
                with self.subTest(command=command):
                    code, out, err = python_cli(command, "store", cwd=tmp)
                    jsonschema.validate(json.loads(out), schema(name))
                    self.assertEqual((code, out), typescript_cli(command, "store", cwd=tmp)[:2], err)

    def test_a_damaged_store_gives_the_same_findings_states_and_plan(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, data in DAMAGED.items():
                path = os.path.join(tmp, "store", name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
            for command in ("check", "audit"):
                with self.subTest(command=command):
                    code, out, err = python_cli(command, "store", cwd=tmp)
                    report = json.loads(out)
                    jsonschema.validate(report, schema("report.schema.json"))
                    ts_code, ts_out, _ = typescript_cli(command, "store", cwd=tmp)
                    self.assertEqual(without_messages(report), without_messages(json.loads(ts_out)))
                    self.assertEqual(code, ts_code)
            code, out, _ = python_cli("recover", "store", cwd=tmp)
            jsonschema.validate(json.loads(out), schema("recover.schema.json"))
            self.assertEqual(json.loads(out), json.loads(typescript_cli("recover", "store", cwd=tmp)[1]))

    def test_recover_apply_writes_what_the_typescript_cli_writes(self):
        outputs, journals = [], []
        for cli in (python_cli, typescript_cli):
            with tempfile.TemporaryDirectory() as tmp:
                for name, data in DAMAGED.items():
                    path = os.path.join(tmp, "store", name)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "wb") as f:
                        f.write(data)
                code, out, err = cli("recover", "store", "--apply", "--journal-only", cwd=tmp)
                self.assertEqual(code, 0, err)
                jsonschema.validate(json.loads(out), schema("recover.schema.json"))
                outputs.append(out)
                written = {}
                for name in ("_turn_journal/s2~7.jsonl", "c1/events.jsonl"):
                    with open(os.path.join(tmp, "store", name), "rb") as f:
                        lines = f.read().split(b"\n")
                    # The clock's members differ from run to run; everything else is the same bytes.
                    written[name] = [{k: v for k, v in json.loads(line).items() if k not in ("created_at", "ts")}
                                     for line in lines if line.startswith(b"{") and line.endswith(b"}")]
                journals.append(written)
        self.assertEqual(outputs[0], outputs[1])
        self.assertEqual(journals[0], journals[1])

    def test_usage_errors_exit_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = python_cli("recover", tmp, "--apply", cwd=tmp)
            self.assertEqual((code, out), (2, ""))
            self.assertIn("--journal-only", err)
            for command in ("check", "audit", "recover"):
                code, out, err = python_cli(command, os.path.join(tmp, "missing"), cwd=tmp)
                self.assertEqual((code, out, err.count("\n")), (2, "", 1), err)
                self.assertIn("no such file or directory", err)


if __name__ == "__main__":
    unittest.main()
