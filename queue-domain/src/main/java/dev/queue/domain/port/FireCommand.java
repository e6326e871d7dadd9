package dev.queue.domain.port;


/**
 * Fires due schedules (unpaused, {@code next_run_at <= now}) of a namespace, or of all namespaces when null, at most
 * {@code limit}. Each schedule is locked (skipping ones another ticker holds), planned, its messages published
 * and its next run stored in one transaction, so concurrent tickers fire each due time exactly once.
 */
public record FireCommand(String namespace, int limit, CommandTime time, FirePlanner planner) {
}
