package dev.queue.inmemory.contract;

import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.NamespaceContract;

class InMemoryNamespaceContractTest extends NamespaceContract {
    @Override
    protected QueueFactory factory() {
        return new InMemoryQueueFactory();
    }
}
