package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ClaimContract;

class PostgresClaimContractTest extends ClaimContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
