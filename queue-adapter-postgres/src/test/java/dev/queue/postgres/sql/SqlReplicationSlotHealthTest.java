package dev.queue.postgres.sql;

import dev.queue.postgres.PostgresOperator;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A replication slot holding back the vacuum horizon. Slots with an xmin need logical decoding (wal_level=logical,
 * a server restart), so this test starts a server of its own rather than reconfiguring the shared one.
 */
class SqlReplicationSlotHealthTest {

    @Test
    void aLogicalSlotWhoseCatalogXminAgesIsReportedUntilDropped() throws Exception {
        try (EmbeddedPostgres server = EmbeddedPostgres.builder()
                .setServerConfig("wal_level", "logical")
                .setServerConfig("max_replication_slots", "4")
                .setServerConfig("max_wal_senders", "4")
                .start()) {
            PostgresOperator operator = PostgresOperator.create(server.getPostgresDatabase(), "queue");
            operator.migrate();
            try (Connection connection = server.getPostgresDatabase().getConnection(); Statement statement = connection.createStatement()) {
                statement.execute("SELECT pg_create_logical_replication_slot('forgotten_consumer', 'pgoutput')");
                statement.execute("SELECT txid_current()");
                statement.execute("SELECT txid_current()");

                List<String> slots = slotWarnings(connection, 0);
                assertThat(slots).singleElement().satisfies(w -> assertThat(w)
                        .contains("replication slot forgotten_consumer (inactive) holds back the vacuum horizon")
                        .contains("pg_drop_replication_slot('forgotten_consumer')"));
                assertThat(slotWarnings(connection, 10_000_000)).as("young slots are fine by default").isEmpty();

                statement.execute("SELECT pg_drop_replication_slot('forgotten_consumer')");
                assertThat(slotWarnings(connection, 0)).isEmpty();
            }
        }
    }

    private static List<String> slotWarnings(Connection connection, int maxAge) throws Exception {
        return SqlTestDatabase.rows(connection, "SELECT message || ' / ' || advice AS text FROM queue.health("
                        + "p_max_slot_xmin_age := " + maxAge + ") WHERE code = 'replication_slot'").stream()
                .map(r -> (String) r.get("text")).toList();
    }
}
