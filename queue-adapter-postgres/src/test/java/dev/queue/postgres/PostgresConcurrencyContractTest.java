package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ConcurrencyContract;

class PostgresConcurrencyContractTest extends ConcurrencyContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
