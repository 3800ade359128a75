"""The library's error classes: one base with a stable ``code``."""


class TurnJournalError(Exception):
    """Base of every error the library raises on purpose; ``code`` is stable (``journal_locked``, ``journal_fenced``:
    the lock was taken over, reopen the file; ``bad_request``, ``refused``, ``failed``)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class BadRequest(TurnJournalError):
    """A call with arguments the library cannot use (a relative path, an invalid identifier, a wrong type)."""

    def __init__(self, message):
        super().__init__("bad_request", message)
