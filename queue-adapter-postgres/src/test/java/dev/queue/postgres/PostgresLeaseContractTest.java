package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.LeaseContract;

class PostgresLeaseContractTest extends LeaseContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
