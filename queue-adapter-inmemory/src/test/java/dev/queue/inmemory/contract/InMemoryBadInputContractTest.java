package dev.queue.inmemory.contract;

import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.BadInputContract;

class InMemoryBadInputContractTest extends BadInputContract {
    @Override
    protected QueueFactory factory() {
        return new InMemoryQueueFactory();
    }
}
