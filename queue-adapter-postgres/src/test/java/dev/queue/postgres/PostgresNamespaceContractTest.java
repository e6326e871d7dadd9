package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.NamespaceContract;

class PostgresNamespaceContractTest extends NamespaceContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
