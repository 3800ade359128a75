"""``python -m turnjournal``: see turnjournal.cli."""

import sys

from .cli import main

sys.exit(main())
