package dev.queue.api;

import java.time.Instant;

/**
 * One attempt of a message, as {@link MessageInfo#attemptHistory()} lists it: its number (from 1, counted again from
 * 1 after a redrive), how it ended, the worker that ran it, when it started and ended, and the error it ended with.
 *
 * @param attempt   the attempt's number, from 1
 * @param outcome   how it ended, {@link AttemptOutcome#RUNNING} while it runs; null when the store did not record it
 * @param worker    the worker that ran it; null when the store does not know it
 * @param startedAt when it was claimed, by the queue's clock; null when the store does not know it
 * @param endedAt   when it ended, by the queue's clock; null while it runs
 * @param error     the error recorded for it (cut at 8,000 characters); null while it runs
 */
public record Attempt(int attempt, AttemptOutcome outcome, String worker, Instant startedAt, Instant endedAt,
                      String error) {
}
