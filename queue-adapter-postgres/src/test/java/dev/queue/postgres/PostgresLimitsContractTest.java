package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.LimitsContract;

class PostgresLimitsContractTest extends LimitsContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
