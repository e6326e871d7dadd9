package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** find_messages and list_namespaces of migration 19: what they find, the window, bad input and the tenant gate. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlOperatorSearchTest {

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private SqlTenantRoles roles;
    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        roles = SqlTenantRoles.create("sqlsearch");
        db = roles.db;
    }

    @AfterAll
    void dropDatabase() {
        roles.close();
    }

    private static String newNamespace() {
        return "find-" + NAMESPACES.incrementAndGet();
    }

    private long push(String namespace, String queue, String key, String headers) {
        return ((Number) db.value("SELECT queue.push(?, ?, '{}'::json, p_unique_key := ?, p_headers := ?::jsonb)",
                namespace, queue, key, headers)).longValue();
    }

    private List<String> found(String sql, Object... params) {
        return db.rows(sql, params).stream().map(r -> r.get("id") + " " + r.get("queue") + " " + r.get("state")).toList();
    }

    @Test
    void aUniqueKeyFindsTheLiveMessageTheDeadLettersAndTheArchivedOnesInEveryTopic() {
        String ns = newNamespace();
        db.value("SELECT * FROM queue.set_queue_policy(?, 'orders', p_archive_completed := true)", ns);
        long completed = push(ns, "orders", "order-7", "{}");
        db.rows("SELECT * FROM queue.pull(?, 'orders')", ns);
        assertThat(db.value("SELECT queue.ack(?, ?)", ns, completed)).isEqualTo(true);
        long dead = push(ns, "invoices", "order-7", "{}");
        db.rows("SELECT * FROM queue.pull(?, 'invoices')", ns);
        assertThat(db.value("SELECT queue.fail(?, ?, 'no customer')", ns, dead)).isEqualTo(true);
        long live = push(ns, "orders", "order-7", "{}");
        push(ns, "orders", "order-8", "{}");
        push(newNamespace(), "orders", "order-7", "{}");

        assertThat(found("SELECT * FROM queue.find_messages(?, p_unique_key := 'order-7')", ns))
                .containsExactly(live + " orders pending", dead + " invoices dead", completed + " orders completed");
        assertThat(found("SELECT * FROM queue.find_messages(?, 'orders', p_unique_key := 'order-7')", ns))
                .containsExactly(live + " orders pending", completed + " orders completed");
        assertThat(found("SELECT * FROM queue.find_messages(?, p_unique_key := 'order-7', p_limit := 2)", ns)).hasSize(2);
        assertThat(found("SELECT * FROM queue.find_messages(?, p_unique_key := 'order-9')", ns)).isEmpty();
        assertThat(db.rows("SELECT unique_key, last_error, finished_at IS NOT NULL AS finished FROM queue.find_messages(?, "
                + "'invoices', p_unique_key := 'order-7')", ns))
                .containsExactly(Map.of("unique_key", "order-7", "last_error", "no customer", "finished", true));
    }

    @Test
    void aHeaderIsSearchedInABoundedWindowOfTheQueue() {
        String ns = newNamespace();
        long first = push(ns, "hooks", null, "{\"tenant\": \"acme\"}");
        push(ns, "hooks", null, "{\"tenant\": \"globex\"}");
        long third = push(ns, "hooks", null, "{\"tenant\": \"acme\", \"region\": \"eu\"}");
        push(ns, "other", null, "{\"tenant\": \"acme\"}");

        assertThat(found("SELECT * FROM queue.find_messages(?, 'hooks', p_header_name := 'tenant', p_header_value := 'acme')", ns))
                .containsExactly(third + " hooks pending", first + " hooks pending");
        assertThat(found("SELECT * FROM queue.find_messages(?, 'hooks', p_header_name := 'region')", ns))
                .containsExactly(third + " hooks pending");
        // the window holds the next two in claim order: the third message is outside it
        assertThat(found("SELECT * FROM queue.find_messages(?, 'hooks', p_header_name := 'tenant', p_header_value := 'acme', "
                + "p_window := 2)", ns)).containsExactly(first + " hooks pending");

        for (int i = 0; i < 3; i++) {
            db.rows("SELECT * FROM queue.pull(?, 'hooks')", ns);
        }
        assertThat(db.value("SELECT queue.fail(?, ?, 'gone')", ns, first)).isEqualTo(true);
        assertThat(found("SELECT * FROM queue.find_messages(?, 'hooks', p_header_name := 'tenant', p_header_value := 'acme')", ns))
                .containsExactly(third + " hooks running", first + " hooks dead");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            SELECT * FROM queue.find_messages('acme')                                                  | invalid p_unique_key: expected exactly one of p_unique_key and p_header_name, got: null
            SELECT * FROM queue.find_messages('acme', p_unique_key := 'k', p_header_name := 'h')         | invalid p_header_name
            SELECT * FROM queue.find_messages('acme', p_header_name := 'tenant')                       | invalid p_queue: expected a queue name
            SELECT * FROM queue.find_messages('acme', 'q', p_header_name := 'bad name')                | got: "bad name"
            SELECT * FROM queue.find_messages('acme', 'q', p_unique_key := '')                         | invalid p_unique_key
            SELECT * FROM queue.find_messages('acme', 'q', p_unique_key := 'k', p_header_value := 'v') | invalid p_header_value
            SELECT * FROM queue.find_messages('acme', 'q', p_unique_key := 'k', p_limit := 0)          | invalid p_limit: expected 1 to 1000, got: 0
            SELECT * FROM queue.find_messages('acme', 'q', p_header_name := 'h', p_window := 10001)    | invalid p_window: expected 1 to 10000, got: 10001
            SELECT * FROM queue.find_messages('bad name', p_unique_key := 'k')                          | invalid p_namespace
            SELECT * FROM queue.list_namespaces(0)                                                     | invalid p_limit: expected 1 to 1000, got: 0
            """)
    void aBadArgumentIsRefusedWithItsNameAndValue(String sql, String message) {
        PSQLException error = db.error(sql);

        assertThat(error.getSQLState()).as(error.getMessage()).isEqualTo("QU001");
        assertThat(error.getServerErrorMessage().getMessage()).contains(message);
    }

    @Test
    void namespacesComeFromTopicsAndSchedulesInNameOrderUpToTheLimit() {
        String a = newNamespace();
        String b = newNamespace();
        push(b, "email", null, "{}");
        db.value("SELECT queue.create_schedule(?, 'nightly', 'reports', '{}', p_cron_expression := '0 3 * * *')", a);
        db.value("SELECT queue.create_schedule(?, 'hourly', 'reports', '{}', p_cron_expression := '0 * * * *')", a);

        List<Object> all = db.rows("SELECT namespace FROM queue.list_namespaces(1000)").stream().map(r -> r.get("namespace")).toList();
        assertThat(all).contains(a, b).doesNotHaveDuplicates().isSortedAccordingTo((x, y) -> x.toString().compareTo(y.toString()));
        assertThat(db.rows("SELECT namespace FROM queue.list_namespaces(1)")).hasSize(1);
    }

    @Test
    void aTenantFindsAndListsOnlyItsOwnNamespaces() throws SQLException {
        String acme = roles.login("acmefind");
        String acmeNs = newNamespace();
        String globexNs = newNamespace();
        db.value("SELECT queue.grant_tenant(?, ?)", acmeNs, acme);
        push(globexNs, "email", "k", "{}");
        long ours = push(acmeNs, "email", "k", "{}");

        try (Connection connection = roles.connectAs(acme)) {
            String sql = "SELECT * FROM queue.find_messages('" + globexNs + "', p_unique_key := 'k')";
            PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, sql), PSQLException.class);
            assertThat(error.getSQLState()).as(sql).isEqualTo("QU005");
            assertThat(SqlTestDatabase.rows(connection, "SELECT id FROM queue.find_messages(?, p_unique_key := 'k')", acmeNs))
                    .extracting(r -> r.get("id")).containsExactly(ours);
            assertThat(SqlTestDatabase.rows(connection, "SELECT namespace FROM queue.list_namespaces()"))
                    .extracting(r -> r.get("namespace")).containsExactly(acmeNs);
        }
    }
}
