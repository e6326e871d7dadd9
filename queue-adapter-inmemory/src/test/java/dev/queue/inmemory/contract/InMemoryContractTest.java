package dev.queue.inmemory.contract;

import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.QueueContract;

/** The whole contract against the in-memory adapter, one nested class per area. */
class InMemoryContractTest extends QueueContract {
    @Override
    protected QueueFactory factory() {
        return new InMemoryQueueFactory();
    }
}
