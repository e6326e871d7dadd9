package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.OrderingKeyContract;

class PostgresOrderingKeyContractTest extends OrderingKeyContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
