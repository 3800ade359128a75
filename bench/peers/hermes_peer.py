"""Hermes-style durable append peer (issue 14): what a Python agent framework does to persist a record, namely take
an exclusive flock on the file, write the JSON line, fsync, release. Run by bench/lib/peers.ts in a child process.

  hermes_peer.py latency DIR LINE_FILE SAMPLES WARMUP
      one file; per sample, alternated: the peer (flock + write + fsync + unlock) and its raw floor in the same
      process (os.write + os.fdatasync on a second file); prints {"peerMs": [...], "floorMs": [...]}.
  hermes_peer.py sessions DIR LINE_FILE SESSIONS PER_SESSION ROUNDS
      SESSIONS threads, one file each, PER_SESSION records each, all at once (the GIL is released during write and
      fsync, so syncs run in parallel); prints {"roundsMs": [...]} (one warm-up round of 2 records first, untimed).
"""
import fcntl
import json
import os
import sys
import threading
import time


def append(fd, line):
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def open_append(path):
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def latency(directory, lines, samples, warmup):
    fd = open_append(os.path.join(directory, "hermes.jsonl"))
    floor_fd = open_append(os.path.join(directory, "hermes-floor.jsonl"))
    peer_ms, floor_ms = [], []
    for i in range(samples + warmup):
        line = lines[i % len(lines)]
        t = time.perf_counter()
        os.write(floor_fd, line)
        os.fdatasync(floor_fd)
        f = time.perf_counter() - t
        t = time.perf_counter()
        append(fd, line)
        p = time.perf_counter() - t
        if i >= warmup:
            floor_ms.append(f * 1000)
            peer_ms.append(p * 1000)
    os.close(fd)
    os.close(floor_fd)
    return {"peerMs": peer_ms, "floorMs": floor_ms}


def sessions(directory, lines, count, per_session, rounds):
    def one_round(tag, n):
        fds = [open_append(os.path.join(directory, "s-%s-%d.jsonl" % (tag, s))) for s in range(count)]

        def loop(s):
            for i in range(n):
                append(fds[s], lines[(s * n + i) % len(lines)])

        threads = [threading.Thread(target=loop, args=(s,)) for s in range(count)]
        t = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - t
        for fd in fds:
            os.close(fd)
        return elapsed * 1000

    one_round("warmup", 2)
    return {"roundsMs": [one_round(r, per_session) for r in range(rounds)]}


def main(argv):
    mode, directory, line_file = argv[1], argv[2], argv[3]
    with open(line_file, "rb") as source:
        lines = [line for line in source.read().split(b"\n") if line]
    lines = [line + b"\n" for line in lines]
    if mode == "latency":
        result = latency(directory, lines, int(argv[4]), int(argv[5]))
    elif mode == "sessions":
        result = sessions(directory, lines, int(argv[4]), int(argv[5]), int(argv[6]))
    else:
        raise SystemExit("unknown mode " + mode)
    result["python"] = "Python " + sys.version.split()[0]
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)
