"""turnjournal: crash-safe chat and agent journals in append-only JSONL (spec v1), for Python.

Seed 000's turn journal (:class:`TurnJournal`, :func:`recover_store` with host hooks), seed 002's event log
(:class:`EventLog`, :func:`recover_messages`), seed 004's run files and state snapshots (:class:`RunWriter`,
:func:`write_state`), and readers of whole stores (:func:`check_store`), run files and state documents. Standard
library only.
"""

from ._internals.errors import BadRequest, TurnJournalError
from .events import (CHECKPOINT_INTERVAL, EventLog, EventLogState, compact_event_log, event_log_path, read_events,
                     recover_event_log, recover_messages)
from .journal import SubmitResult, TurnJournal, new_turn_id, turn_journal_path
from .recovery import (SERVER_STARTUP_RECOVERY, PlannedTurn, RecoveringTurn, RecoveryHooks, StoreRecovery,
                       plan_recovery, recover_store)
from .report import FINDING_CODES, check_store, read_run, read_state
from .runs import RunWriter, StateWritten, run_file_path, state_document_path, utc_timestamp, write_state

__version__ = "0.1.0"

__all__ = [
    "BadRequest", "CHECKPOINT_INTERVAL", "EventLog", "EventLogState", "FINDING_CODES", "PlannedTurn", "RecoveringTurn",
    "RecoveryHooks", "RunWriter", "SERVER_STARTUP_RECOVERY", "StateWritten", "StoreRecovery", "SubmitResult",
    "TurnJournal", "TurnJournalError", "check_store", "compact_event_log", "event_log_path", "new_turn_id", "plan_recovery", "read_events",
    "read_run", "read_state", "recover_event_log", "recover_messages", "recover_store", "run_file_path", "state_document_path",
    "turn_journal_path", "utc_timestamp", "write_state",
]
