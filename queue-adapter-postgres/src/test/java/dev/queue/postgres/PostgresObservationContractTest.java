package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ObservationContract;

class PostgresObservationContractTest extends ObservationContract {
    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
