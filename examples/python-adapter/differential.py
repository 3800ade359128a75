#!/usr/bin/env python3
"""Differential driver: mutates the stores of the fixture cases at random (cut, repeat, swap and corrupt lines,
glue heads, add NUL runs, CRLF, torn tails) and compares this adapter's `read` with another adapter's, by default the
reference one (`turnjournal adapter`), over the adapter protocol.

    python3 differential.py [--runs 300] [--seed 20260511] [--other "node ../../packages/conformance/dist/cli/main.js adapter"]

Prints every disagreement (with the seed and the store written to a kept directory) and exits 1 when there was one.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(REPO, "fixtures", "v1", "store")


class Peer:
    def __init__(self, command):
        self.proc = subprocess.Popen(["sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=REPO)
        self.next_id = 1
        self.request("start", protocol=1)

    def request(self, op, **params):
        message = dict(id=self.next_id, op=op, **params)
        self.next_id += 1
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("adapter exited: " + " ".join(self.proc.args))
        return json.loads(line)

    def close(self):
        try:
            self.request("stop")
        finally:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def mutate(data, rng):
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        kind = rng.choice(["cut", "repeat", "swap", "garbage", "glue", "nul", "crlf", "torn", "byte", "drop"])
        line = lines[i]
        if kind == "cut" and line:
            lines[i] = line[: rng.randrange(len(line))]
        elif kind == "repeat":
            lines.insert(i, line)
        elif kind == "swap" and len(lines) > 1:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "garbage":
            lines.insert(i, rng.choice([b"garbage", b"[1]", b"{}", b'{"type":5}', b"\xff\xfe", b" ", b"\xef\xbb\xbf{}"]))
        elif kind == "glue" and line:
            j = rng.randrange(len(lines))
            lines[i] = lines[j][: rng.randrange(len(lines[j]) + 1)] + line
        elif kind == "nul":
            lines[i] = line[: rng.randrange(len(line) + 1)] + b"\x00" * rng.randint(1, 4) + line
        elif kind == "crlf":
            lines[i] = line + b"\r"
        elif kind == "torn":
            lines[-1] = lines[-1] + (line[: rng.randrange(len(line) + 1)] if line else b'{"v')
        elif kind == "byte" and line:
            p = rng.randrange(len(line))
            lines[i] = line[:p] + bytes([rng.randrange(256)]) + line[p + 1:]
        elif kind == "drop":
            del lines[i]
    return b"\n".join(lines)


def comparable(result):
    findings = sorted(json.dumps({k: f.get(k) for k in ("code", "file", "line", "turn_id")}, sort_keys=True)
                      for f in result.get("findings", []))
    return {
        "turns": result.get("turns", {}),
        "runs": result.get("runs", {}),
        "event_logs": result.get("event_logs", {}),
        "plan": result.get("plan", []),
        "findings": findings,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=int(os.environ.get("TJ_PROPERTY_SEED", "20260511")))
    parser.add_argument("--other", default="node packages/conformance/dist/cli/main.js adapter")
    parser.add_argument("--mine", default="python3 examples/python-adapter/adapter.py")
    args = parser.parse_args()
    cases = []
    for name in sorted(os.listdir(FIXTURES)):
        with open(os.path.join(FIXTURES, name), "rb") as f:
            cases += json.loads(f.read().decode("utf-8"))["cases"]
    rng = random.Random(args.seed)
    mine, other = Peer(args.mine), Peer(args.other)
    disagreements = 0
    try:
        for run in range(args.runs):
            case = rng.choice(cases)
            root = os.path.realpath(tempfile.mkdtemp(prefix="tj-diff-"))
            for item in case["files"]:
                data = item["text"].encode("utf-8", "surrogatepass") if "text" in item else bytes.fromhex(item["hex"])
                if rng.random() < 0.8:
                    data = mutate(data, rng)
                path = os.path.join(root, item["path"])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
            mode = rng.choice(["tolerant", "tolerant", "prefix", "strict"])
            request = {"paths": [root], "mode": mode, "audit": rng.random() < 0.3}
            a, b = mine.request("read", **request), other.request("read", **request)
            ca = comparable(a.get("result", {})) if a.get("ok") else a
            cb = comparable(b.get("result", {})) if b.get("ok") else b
            if mode != "tolerant" and a.get("ok") and b.get("ok"):
                # The reference derives event_logs by a tolerant re-read whatever the mode (observeEventLog in
                # packages/conformance/src/fixtures/run-store-fixtures.ts); this adapter honours the mode.
                ca["event_logs"] = cb["event_logs"] = None
            if ca != cb:
                disagreements += 1
                print("run %d (seed %d, case %r, mode %s): disagreement; store kept at %s"
                      % (run, args.seed, case["description"], mode, root))
                for key in ca:
                    if ca.get(key) != cb.get(key):
                        print("  %s\n    mine:  %s\n    other: %s" % (key, json.dumps(ca.get(key))[:1500],
                                                                     json.dumps(cb.get(key))[:1500]))
            else:
                shutil.rmtree(root)
    finally:
        mine.close()
        other.close()
    print("%d runs, %d disagreements (seed %d)" % (args.runs, disagreements, args.seed))
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
