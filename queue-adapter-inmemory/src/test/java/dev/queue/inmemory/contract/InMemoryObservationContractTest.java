package dev.queue.inmemory.contract;

import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ObservationContract;

class InMemoryObservationContractTest extends ObservationContract {
    @Override
    protected QueueFactory factory() {
        return new InMemoryQueueFactory();
    }
}
