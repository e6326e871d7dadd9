package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.DedupContract;

class PostgresDedupContractTest extends DedupContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
