"""A Python client for the queue's SQL interface (PostgreSQL, schema ``queue``), on psycopg 3.

``QueueClient`` calls the SQL functions with the tenant set per call; ``Worker`` claims, runs, extends and settles
messages as the Java runtime does. See docs/python.md in the repository.
"""
from .client import (ClaimedMessage, DeadLetter, FiredSchedule, MessageInfo, NamespaceStats, PausedQueue,
                     QueueClient, QueueStats, RedriveResult, ScheduleInfo)
from .errors import (InvalidArgument, InvalidPayload, IsolationLevelTooStrict, NotPermitted, QueueError,
                     ScheduleNotFound, TenantMismatch)
from .worker import Handler, Worker

__all__ = [
    "QueueClient", "Worker", "Handler",
    "ClaimedMessage", "DeadLetter", "FiredSchedule", "MessageInfo", "NamespaceStats", "PausedQueue", "QueueStats",
    "RedriveResult", "ScheduleInfo",
    "QueueError", "InvalidArgument", "InvalidPayload", "IsolationLevelTooStrict", "NotPermitted",
    "ScheduleNotFound", "TenantMismatch",
]
