package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.StatsContract;

class PostgresStatsContractTest extends StatsContract {

    @Override
    protected QueueFactory factory() {
        return new PostgresQueueFactory();
    }
}
