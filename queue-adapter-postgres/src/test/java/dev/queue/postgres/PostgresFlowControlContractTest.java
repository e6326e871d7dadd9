package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.FlowControlContract;

class PostgresFlowControlContractTest extends FlowControlContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
