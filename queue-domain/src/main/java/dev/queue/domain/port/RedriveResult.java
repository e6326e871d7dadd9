package dev.queue.domain.port;

/**
 * What one redrive call did: how many dead letters became pending, how many it looked at (fewer than the limit:
 * there are no more), and the highest id it looked at, where the next batch starts.
 */
public record RedriveResult(int redriven, int examined, long lastId) {
}
