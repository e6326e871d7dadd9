package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.DeadLetterContract;

class PostgresDeadLetterContractTest extends DeadLetterContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
