package dev.queue.inmemory.contract;

import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.PublishContract;

class InMemoryPublishContractTest extends PublishContract {
    @Override
    protected QueueFactory factory() {
        return new InMemoryQueueFactory();
    }
}
