package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.PublishContract;

class PostgresPublishContractTest extends PublishContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
