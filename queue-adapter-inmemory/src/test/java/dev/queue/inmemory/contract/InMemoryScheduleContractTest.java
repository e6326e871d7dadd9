package dev.queue.inmemory.contract;

import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ScheduleContract;

class InMemoryScheduleContractTest extends ScheduleContract {
    @Override
    protected QueueFactory factory() {
        return new InMemoryQueueFactory();
    }
}
