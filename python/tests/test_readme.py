"""The README's "From Python" snippets run as written, with the application's own values filled in."""

import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
README = os.path.join(HERE, "..", "..", "README.md")


def snippets():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### From Python"):text.index("## For implementers")]
    return re.findall(r"```python\n(.*?)\n```", section, re.S)


class Readme(unittest.TestCase):
    def test_both_flows_run_as_written(self):
        found = snippets()
        self.assertEqual(len(found), 2)
        with tempfile.TemporaryDirectory() as tmp:
            started = []
            context = {"root": tmp, "session_id": "s1", "content": "hello", "client_turn_id": "t1",
                       "stream_id": "stream-1", "start_worker": started.append,
                       "logdir": os.path.join(tmp, "conversation")}
            os.makedirs(context["logdir"])
            for code in found:
                exec(compile(code, README, "exec"), context)
            self.assertEqual(started, ["t1"])
            self.assertEqual(context["messages"], None)  # appended, edited, undone: no message left


if __name__ == "__main__":
    unittest.main()
