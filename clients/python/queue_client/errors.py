"""Typed errors: the engine's SQLSTATEs of class QU, and the client's own argument checks.

Every error carries the offending parameter (the SQL argument name, such as ``p_priority``, or the Python one) and
the value received, so a caller can tell what to fix without parsing the message.
"""
from __future__ import annotations

import re
from typing import Any

import psycopg

__all__ = [
    "QueueError",
    "InvalidArgument",
    "TenantMismatch",
    "ScheduleNotFound",
    "InvalidPayload",
    "NotPermitted",
    "IsolationLevelTooStrict",
    "translate",
]


class QueueError(Exception):
    """Base of every error this package raises. ``sqlstate`` is None for errors found before any SQL ran."""

    sqlstate: str | None = None

    def __init__(self, message: str, parameter: str | None = None, value: Any = None,
                 sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.parameter = parameter
        self.value = value
        # the class's code says which SQLSTATE it stands for; the instance's, whether the engine raised it
        self.sqlstate = sqlstate


class InvalidArgument(QueueError, ValueError):
    """QU001: an argument breaks its rule (a name, limit, interval, header, cron expression, time zone...)."""

    sqlstate = "QU001"


class TenantMismatch(QueueError):
    """QU002: the namespace differs from the tenant set for the session."""

    sqlstate = "QU002"


class ScheduleNotFound(QueueError, LookupError):
    """QU003: no schedule of that name in the namespace."""

    sqlstate = "QU003"


class InvalidPayload(QueueError, ValueError):
    """QU004: the payload cannot be stored (too large, a NUL escape) or cannot be encoded as JSON."""

    sqlstate = "QU004"


class NotPermitted(QueueError, PermissionError):
    """QU005: the login role may not use the namespace, or the call needs the owner or operator role."""

    sqlstate = "QU005"


class IsolationLevelTooStrict(QueueError):
    """QU006: a keyed message pushed or settled in a transaction above READ COMMITTED."""

    sqlstate = "QU006"


_BY_SQLSTATE: dict[str, type[QueueError]] = {
    cls.sqlstate: cls
    for cls in (InvalidArgument, TenantMismatch, ScheduleNotFound, InvalidPayload, NotPermitted,
                IsolationLevelTooStrict)
    if cls.sqlstate
}

# "invalid p_priority: expected 0 (first) to 9 (last), got: 12" - the engine's wording for QU001 and QU004
_GOT = re.compile(r", got: (?P<value>.*)\Z", re.DOTALL)
# 'namespace "other" differs from the tenant "acme" ...' and 'namespace "x" is not granted to role ...'
_NAMESPACE = re.compile(r"\Anamespace (?P<value>.+?) (differs|is not granted)")


def translate(error: psycopg.Error) -> Exception:
    """The typed error for a psycopg error raised by the engine, or the error itself when it is not the queue's."""
    sqlstate = error.sqlstate
    cls = _BY_SQLSTATE.get(sqlstate or "")
    if cls is None:
        return error
    message = error.diag.message_primary or str(error)
    parameter = error.diag.column_name
    value: Any = None
    match = _GOT.search(message) or _NAMESPACE.search(message)
    if match:
        value = _unquote(match.group("value"))
    translated = cls(message, parameter=parameter, value=value, sqlstate=sqlstate)
    translated.__cause__ = error
    return translated


def _unquote(shown: str) -> str | None:
    """The engine shows text in double quotes ("x"); the text itself is more useful to a caller."""
    if len(shown) >= 2 and shown[0] == '"' and shown[-1] == '"':
        return shown[1:-1]
    return None if shown == "null" else shown
