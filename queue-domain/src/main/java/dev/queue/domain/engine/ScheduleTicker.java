package dev.queue.domain.engine;

import dev.queue.api.InvalidInputException;
import dev.queue.api.QueueOptions;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.ScheduleQuery;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Fires due schedules of every namespace by itself, so applications need no external cron: every tick interval,
 * and early for the next due schedule, a clock jump or a schedule change. Any number of replicas may run one; the
 * store's row locks make each due time fire once.
 */
final class ScheduleTicker implements MaintenanceService<ScheduleTicker.Fired> {

    private static final Logger log = LoggerFactory.getLogger(ScheduleTicker.class);

    /**
     * @param interval  how often it fires due schedules; zero: never by itself (the application calls {@code tick()})
     * @param batchSize due schedules fired per store call at most (a pass, a {@code tick()} or {@code runDue()} call
     *                  goes batch by batch)
     */
    record Config(Duration interval, int batchSize) {

        static final int DEFAULT_BATCH_SIZE = 500;

        Config {
            MaintenanceRunner.within("scheduleTickInterval", interval, Duration.ZERO, Duration.ofHours(1), "0 (off) to 1 h");
            if (batchSize < 1 || batchSize > 10_000) {
                throw new InvalidInputException("schedule batchSize", batchSize, "1 to 10000");
            }
        }

        static Config of(QueueOptions options) {
            return new Config(options.scheduleTickInterval(), DEFAULT_BATCH_SIZE);
        }

        boolean off() {
            return interval.isZero();
        }
    }

    /** What a pass did: how many schedules fired, and when the next is due (null: none is). */
    record Fired(int fired, boolean batchFull, Instant next) implements MaintenanceService.Report {

        @Override
        public Optional<Instant> nextDueAt() {
            return Optional.ofNullable(next);
        }
    }

    private final ScheduleFiring firing;
    private final Config config;

    ScheduleTicker(ScheduleFiring firing, Config config) {
        this.firing = firing;
        this.config = config;
    }

    @Override
    public String name() {
        return "schedule ticker";
    }

    @Override
    public Duration interval() {
        return config.interval();
    }

    /** One batch of due schedules of every namespace, then the next due time when none is left. */
    @Override
    public Fired runOnce() {
        List<FiredMessage> batch = firing.fireBatch(null);
        for (FiredMessage m : batch) {
            log.debug("schedule {} (namespace {}) fired for {} as message {}; next run {}", m.name(), m.namespace(), m.dueAt(),
                    m.messageId(), m.nextRunAt());
        }
        if (batch.size() >= firing.batchSize()) {
            return new Fired(batch.size(), true, null);
        }
        return new Fired(batch.size(), false, firing.store().scheduleNextRunAt(ScheduleQuery.allNamespaces()).orElse(null));
    }
}
