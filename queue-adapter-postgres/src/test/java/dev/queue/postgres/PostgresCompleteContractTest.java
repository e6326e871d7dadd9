package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.CompleteContract;

class PostgresCompleteContractTest extends CompleteContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
