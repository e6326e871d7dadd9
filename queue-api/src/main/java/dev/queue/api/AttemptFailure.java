package dev.queue.api;

import java.time.Instant;

/**
 * One failed attempt of a message, as {@link MessageInfo#attemptHistory()} lists it: the attempt's number (from 1,
 * counted again from 1 after a redrive), the error it ended with, the worker that ran it (null when the store does
 * not know it) and when it failed.
 *
 * @param attempt  the attempt's number, from 1
 * @param error    the error recorded for it (cut at 8,000 characters)
 * @param worker   the worker that ran it; null when the store does not know it
 * @param failedAt when it failed, by the queue's clock
 */
public record AttemptFailure(int attempt, String error, String worker, Instant failedAt) {
}
