package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.SubscriberRuntimeContract;

class PostgresSubscriberRuntimeContractTest extends SubscriberRuntimeContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
