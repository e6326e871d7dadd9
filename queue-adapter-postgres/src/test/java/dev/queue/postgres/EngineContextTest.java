package dev.queue.postgres;

import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.LeaseRef;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import static dev.queue.domain.port.CommandTime.storeClock;
import static dev.queue.postgres.StoreFixture.NS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java adapter passes its context to the engine functions as parameters and never reads the session's tenant
 * or actor: what one borrower of a pooled connection left in the session changes nothing for the next one.
 */
class EngineContextTest {

    @Test
    void aTenantAndActorLeftOnAPooledConnectionDoNotReachTheJavaAdapter() throws SQLException {
        // one connection, so every statement of the store runs on the session the first borrower changed
        try (StoreFixture db = new StoreFixture("context", CompletedRetention.DELETE, 1)) {
            Object backend;
            try (Connection first = db.pool.getConnection(); Statement statement = first.createStatement();
                 ResultSet rs = statement.executeQuery("SELECT pg_backend_pid(), set_config('queue.tenant_id', "
                         + "'another-tenant', false), set_config('queue.actor', 'mallory', false)")) {
                rs.next();
                backend = rs.getObject(1);
            }
            assertThat(db.query("SELECT pg_backend_pid()")).containsExactly(backend);
            assertThat(db.query("SELECT current_setting('queue.actor', true)")).containsExactly("mallory");

            long id = db.publish(StoreFixture.message("t"), storeClock());
            ClaimedMessage claimed = db.claimOne("t", 7, storeClock());
            assertThat(claimed.id()).isEqualTo(id);
            assertThat(db.query("SELECT published_by FROM $s.messages WHERE id = " + id)).containsExactly((Object) null);
            assertThat(db.store.messageAckIfLeased(new AckCommand(NS, List.of(new LeaseRef(id, 7)), storeClock())))
                    .containsExactly(id);
            assertThat(db.count("messages")).isZero();
        }
    }
}
