package dev.queue.example.customadapter;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.QueueContract;

/** The whole contract against the example's adapter, one nested class per area; limits are declared missing. */
class OneLockContractTest extends QueueContract {

    @Override
    protected QueueFactory factory() {
        return new OneLockQueueFactory();
    }
}
