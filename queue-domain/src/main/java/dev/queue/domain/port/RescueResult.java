package dev.queue.domain.port;

/** What one rescue pass did. */
public record RescueResult(int requeued, int deadLettered) {

    public int total() {
        return requeued + deadLettered;
    }
}
