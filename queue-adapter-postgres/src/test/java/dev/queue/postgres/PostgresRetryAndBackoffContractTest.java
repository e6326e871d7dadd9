package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.RetryAndBackoffContract;

class PostgresRetryAndBackoffContractTest extends RetryAndBackoffContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
