package dev.queue.inmemory.contract;

import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.DeadLetterContract;

class InMemoryDeadLetterContractTest extends DeadLetterContract {
    @Override
    protected QueueFactory factory() {
        return new InMemoryQueueFactory();
    }
}
