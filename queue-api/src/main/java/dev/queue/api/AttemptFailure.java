package dev.queue.api;

import java.time.Instant;

/**
 * One failed attempt of a message, as {@link MessageInfo#attemptHistory()} lists it: the attempt's number (from 1,
 * counted again from 1 after a redrive), the error it ended with, the worker that ran it (null when the store does
 * not know it) and when it failed.
 */
public record AttemptFailure(int attempt, String error, String worker, Instant failedAt) {
}
