"""The fold of an event log (spec §6.5, §15)."""

import bisect

from . import defects
from .records import FINISHING


# ---------------------------------------------------------------------------
# Event logs (spec §6.5, §15)
# ---------------------------------------------------------------------------


class SeqSet:
    """The accepted seqs of an event log as ascending intervals: they only grow, so a log without gaps is one interval
    and the set's size follows the gaps (each one a finding), not the records (TJ-FRAME-033)."""

    def __init__(self):
        self.intervals = []  # [first, last] pairs, ascending, disjoint

    def add(self, seq):
        """Add a seq; a fold adds them ascending, except a mutant that keeps regressed seqs."""
        if self.intervals and seq <= self.intervals[-1][1]:
            if seq not in self:
                import bisect
                bisect.insort(self.intervals, [seq, seq])
            return
        if self.intervals and self.intervals[-1][1] + 1 == seq:
            self.intervals[-1][1] = seq
        else:
            self.intervals.append([seq, seq])

    def __contains__(self, seq):
        import bisect
        i = bisect.bisect_right(self.intervals, [seq, float("inf")]) - 1
        return i >= 0 and self.intervals[i][0] <= seq <= self.intervals[i][1]


class EventFold:
    """The fold of an event log (spec §6.5, §15), fed one accepted record at a time in file order."""

    def __init__(self, path, findings, accepted_seqs=None):
        self.path = path
        self.findings = findings
        self.accepted_seqs = accepted_seqs  # a list to append each accepted seq to (replay), or None
        self.messages = []
        self.accepted = SeqSet()
        self.last = None
        self.first = None  # the first accepted seq (a mutant's)
        self.runs = []  # request ids in chat.started order
        self.run_line = {}
        self.finished = set()
        self.acked = set()
        self.segment = None  # dict(request_id, message_id, text) of the open segment candidate
        self.epoch = None  # the log's epoch (spec §6.7), None for none
        self.parts = None  # the split checkpoint being read: dict(line, offset, parts, next, seq, messages)

    def feed(self, rec):
        path, findings = self.path, self.findings
        obj = rec["obj"]
        seq = obj.get("seq")
        last = self.last
        if defects.MUTANT == "below-first-silent" and self.first is not None and seq < self.first:
            return  # defect switch: TJ-EVENT-014 (a seq below the log's first taken for a compaction leftover)
        if self.first is None:
            self.first = seq
        if last is not None and seq <= last:  # TJ-EVENT-013/014
            code = "seq_duplicate" if seq in self.accepted and defects.MUTANT != "duplicate-as-regression" else "seq_regression"
            findings.add(code, path, rec["line"], rec["offset"])
            if defects.MUTANT != "regressed-seq-kept":  # defect switch: TJ-EVENT-013
                return
        if last is not None and seq > last + 1 and defects.MUTANT != "no-seq-gap":  # defect switch: TJ-EVENT-015
            findings.add("seq_gap", path, rec["line"], rec["offset"])  # TJ-EVENT-015
        self.accepted.add(seq)
        if self.accepted_seqs is not None:
            self.accepted_seqs.append(seq)
        self.last = seq
        self.fold_epoch(rec)
        if rec["type"] == "checkpoint.part" and not rec.get("unknown"):
            if defects.MUTANT != "split-checkpoint-ignored":  # defect switch: TJ-REPLAY-019
                payload = obj["payload"]
                # A complete split checkpoint is one checkpoint at its last part: without an epoch it clears it (§6.7).
                if self.feed_part(rec, payload, seq) and not _is_epoch(obj.get("epoch")) \
                        and defects.MUTANT != "epoch-not-cleared":
                    self.epoch = None
            return
        if self.parts is not None:
            self.interrupt_parts()
        if rec.get("unknown"):
            if defects.MUTANT == "extension-closes-segment":
                self.segment = None  # defect switch: TJ-REPLAY-009 (the overlay is the deltas at the very tail)
            return
        t = rec["type"]
        payload = obj.get("payload")
        messages = self.messages
        if t == "message_append":
            messages.append(payload["message"])
        elif t == "message_edit":
            if "index" in payload and "message" in payload:
                i = int(payload["index"])
                if i < len(messages):
                    messages[i] = payload["message"]
                elif defects.MUTANT == "edit-out-of-range-appends":
                    messages.append(payload["message"])  # defect switch: TJ-REPLAY-002
                else:
                    findings.add("inapplicable_event", path, rec["line"], rec["offset"])
            elif "messages" in payload:  # always, for a valid record (TJ-EVENT-005); not for a lax mutant's
                self.messages = list(payload["messages"])
        elif t == "undo":
            n = int(payload.get("n", 1)) if isinstance(payload, dict) else 1
            if n > len(messages):
                self.messages = []
                findings.add("inapplicable_event", path, rec["line"], rec["offset"])
            else:
                del messages[len(messages) - n:]
        elif t == "checkpoint" and defects.MUTANT != "checkpoint-ignored":  # defect switch: TJ-REPLAY-001
            # defect switch: TJ-REPLAY-004 (folds what came before the checkpoint too)
            self.messages = messages + list(payload["messages"]) if defects.MUTANT == "checkpoint-merges" \
                else list(payload["messages"])
        if t in ("message_append", "message_edit", "undo", "tool.start") or (
                t == "checkpoint" and defects.MUTANT == "checkpoint-closes-segment"):  # defect switch: TJ-REPLAY-011
            self.segment = None
        if t == "chat.started":
            rid = payload["request_id"]
            if rid not in self.run_line:
                self.runs.append(rid)
                self.run_line[rid] = (rec["line"], rec["offset"])
            elif defects.MUTANT != "no-duplicate-run-start":  # TJ-EVENT-016: a second chat.started starts no run
                findings.add("duplicate_run_start", path, rec["line"], rec["offset"])
            self.segment = None
        elif t in FINISHING:
            self.finished.add(payload["request_id"])
        elif t == "delivery.ack":
            if defects.MUTANT == "ack-unknown-run-reported" and payload["request_id"] not in self.run_line:
                findings.add("inapplicable_event", path, rec["line"], rec["offset"])  # defect switch: TJ-REPLAY-017
            self.acked.add(payload["request_id"])
        elif t == "assistant.segment.started":
            self.segment = {"request_id": payload["request_id"], "message_id": payload["message_id"], "text": []}
        elif t == "chat.delta" and self.segment is not None and (
                payload["message_id"] == self.segment["message_id"] or defects.MUTANT == "overlay-any-message-id"):
            self.segment["text"].append(payload["text"])  # TJ-REPLAY-009

    def feed_part(self, rec, payload, seq):
        """A checkpoint.part (TJ-REPLAY-019): part 0 opens a set, the part due next (next seq, same count) continues
        it, the last one replaces the list with the parts' messages; anything else leaves the set incomplete. True when
        the part completed a set."""
        parts = self.parts
        if parts is not None and not (payload["part"] == parts["next"] and payload["parts"] == parts["parts"]
                                      and seq == parts["seq"]):
            self.interrupt_parts()
        if self.parts is None:
            if payload["part"] != 0:
                self.findings.add("incomplete_checkpoint", self.path, rec["line"], rec["offset"])  # TJ-REPLAY-019
                return False
            self.parts = {"line": rec["line"], "offset": rec["offset"], "parts": payload["parts"], "next": 0,
                          "seq": seq, "messages": []}
        parts = self.parts
        parts["messages"].extend(payload["messages"])
        parts["next"] += 1
        parts["seq"] = seq + 1
        if parts["next"] < parts["parts"]:
            return False
        self.parts = None
        self.messages = parts["messages"]
        return True

    def interrupt_parts(self):
        """The open split checkpoint is incomplete (a part missing, out of order or interrupted): it has no effect."""
        parts, self.parts = self.parts, None
        if defects.MUTANT == "incomplete-parts-used":  # defect switch: TJ-REPLAY-019, TJ-REPLAY-020 (trusts a partial set)
            self.messages = parts["messages"]
        self.findings.add("incomplete_checkpoint", self.path, parts["line"], parts["offset"])  # TJ-REPLAY-019

    def fold_epoch(self, rec):
        """Spec §6.7: an epoch sets the log's, a valid checkpoint without one clears it, a second one conflicts."""
        epoch = rec["obj"].get("epoch")
        if not _is_epoch(epoch):
            if rec["type"] == "checkpoint" and not rec.get("unknown") and defects.MUTANT != "epoch-not-cleared":
                self.epoch = None  # TJ-EVENT-025 (defect switch: epoch-not-cleared)
            return
        if self.epoch is not None and epoch != self.epoch and defects.MUTANT != "no-epoch-conflict":  # TJ-EVENT-026
            self.findings.add("epoch_conflict", self.path, rec["line"], rec["offset"])  # TJ-EVENT-026
        self.epoch = epoch

    def finish(self):
        """The log's state once every record was fed; reports the abandoned runs (TJ-REPLAY-010)."""
        if self.parts is not None:  # the file ends inside a split checkpoint (a crash between its parts)
            self.interrupt_parts()
        runs, finished, segment = self.runs, self.finished, self.segment
        active = runs[-1] if runs and runs[-1] not in finished else None
        for rid in runs:
            if rid not in finished and rid != active and defects.MUTANT != "no-abandoned-run":  # defect switch: TJ-REPLAY-010
                line, offset = self.run_line[rid]
                self.findings.add("abandoned_run", self.path, line, offset)  # TJ-REPLAY-010
        overlay = "".join(segment["text"]) if segment is not None and active is not None \
            and segment["request_id"] == active else None
        return {
            "last_seq": self.last,
            "epoch": self.epoch,
            "messages": self.messages,
            "active_request_id": active,
            "overlay": overlay,
            "undelivered": [rid for rid in runs if rid in finished
                            and (rid not in self.acked or defects.MUTANT == "acks-ignored")],  # defect switch: TJ-REPLAY-015
        }


def _is_epoch(value):
    """Spec §6.7: a string of 1 to 128 characters; any other value is no epoch."""
    return isinstance(value, str) and 1 <= len(value) <= 128


def fold_event_log(jf, findings):
    """The state of an event log: its streaming fold when the read folded it, else the fold of its kept records
    (which also lists the accepted seqs in ``jf.accepted_seqs``, for replay)."""
    fold = jf.fold
    if fold is None:
        fold = EventFold(jf.path, findings, jf.accepted_seqs)
        for rec in jf.records:
            fold.feed(rec)
    return fold.finish()
