package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ScheduleRuntimeContract;

class PostgresScheduleRuntimeContractTest extends ScheduleRuntimeContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
