package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.PriorityAndDelayContract;

class PostgresPriorityAndDelayContractTest extends PriorityAndDelayContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
