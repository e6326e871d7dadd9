package dev.queue.domain.port;

import java.time.Instant;

/** The domain's rule for a due schedule, called by the store inside the transaction that holds the schedule's lock. */
@FunctionalInterface
public interface FirePlanner {

    /** {@code now} is the store's time for this transaction. */
    FirePlan plan(ScheduleRecord schedule, Instant now);
}
