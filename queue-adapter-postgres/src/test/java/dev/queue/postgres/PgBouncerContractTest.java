package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.ClaimContract;
import dev.queue.testkit.contract.CompleteContract;
import dev.queue.testkit.contract.PublishContract;
import dev.queue.testkit.contract.ScheduleContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/**
 * The contract's publish, claim, settle and schedule areas through PgBouncer 1.18 in transaction mode, with no
 * direct URL: every statement may land on another server connection, and LISTEN delivers nothing. Real servers
 * (Debian's PostgreSQL 15 and PgBouncer): skipped without them, except on CI (CI=true).
 */
@Tag("slow")
class PgBouncerContractTest {

    private static LocalPostgresCluster server;
    private static LocalPgBouncer bouncer;

    static synchronized QueueFactory factory() {
        LocalPostgresCluster.assumeAvailable();
        LocalPgBouncer.assumeAvailable();
        if (server == null) {
            server = LocalPostgresCluster.startNew();
            bouncer = LocalPgBouncer.startInFrontOf(server, 20);
        }
        return new PgBouncerQueueFactory(server, bouncer);
    }

    @AfterAll
    static synchronized void stopServers() {
        if (bouncer != null) {
            bouncer.close();
            bouncer = null;
        }
        if (server != null) {
            server.close();
            server = null;
        }
    }

    @Nested
    class Publish extends PublishContract {
        @Override
        protected QueueFactory factory() {
            return PgBouncerContractTest.factory();
        }
    }

    @Nested
    class Claim extends ClaimContract {
        @Override
        protected QueueFactory factory() {
            return PgBouncerContractTest.factory();
        }
    }

    @Nested
    class Complete extends CompleteContract {
        @Override
        protected QueueFactory factory() {
            return PgBouncerContractTest.factory();
        }
    }

    @Nested
    class Schedule extends ScheduleContract {
        @Override
        protected QueueFactory factory() {
            return PgBouncerContractTest.factory();
        }
    }
}
