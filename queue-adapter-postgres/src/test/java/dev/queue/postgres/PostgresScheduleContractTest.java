package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ScheduleContract;

class PostgresScheduleContractTest extends ScheduleContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
