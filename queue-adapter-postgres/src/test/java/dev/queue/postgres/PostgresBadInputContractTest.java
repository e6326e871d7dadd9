package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.BadInputContract;

class PostgresBadInputContractTest extends BadInputContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
