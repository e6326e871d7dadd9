package dev.queue.postgres;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The SQL boundary under hostile input: every public function and procedure of the schema (found in the catalog,
 * so a new one is covered without being listed here), each parameter in turn given NULL, empty, huge, unicode edge
 * cases, injection-shaped text, extreme numbers, intervals and instants, odd JSON and multi-dimensional, empty, huge
 * and NULL-holding arrays ({@link HostileValues}), the other arguments valid. Every call must end in success or a
 * typed error (SQLSTATE class QU): a raw PostgreSQL error, a timeout or an exhausted resource fails the test with
 * the list of them. A typed error must change nothing, no call may leave a lock held, and a tenant's successes must
 * leave other namespaces alone ({@link HostileInputRun}). It runs as the migrating role (a superuser), as a login
 * of the app role and as a tenant login granted 'acme' only, each on a fresh copy of the schema.
 *
 * <p>Each role prints one summary line; the raw errors, grouped by function and SQLSTATE, are written to
 * target/hostile-input-report.txt.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileInputTest {

    private static final String PASSWORD = "hostile-input-secret";
    private static final Path REPORT = Path.of("target", "hostile-input-report.txt");

    private final String suffix = Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
    private final List<String> logins = new ArrayList<>();
    private final List<HostileInputRun.Result> results = new ArrayList<>();
    private String appLogin;
    private String acmeLogin;
    private String globexLogin;

    @BeforeAll
    void createLogins() {
        appLogin = login("hostile_app");
        acmeLogin = login("hostile_acme");
        globexLogin = login("hostile_globex");
    }

    @AfterAll
    void dropLogins() {
        for (String login : logins) {
            PostgresTestServer.execute("DROP ROLE IF EXISTS " + login);
        }
    }

    @Test
    void theMigratingRoleGetsOnlySuccessesAndTypedErrors() throws Exception {
        assertClean(run("the migrating role", null, false));
    }

    @Test
    void anAppLoginGetsOnlySuccessesAndTypedErrors() throws Exception {
        assertClean(run("an app login", appLogin, false));
    }

    @Test
    void aTenantLoginGetsOnlySuccessesAndTypedErrorsAndTouchesNoOtherNamespace() throws Exception {
        assertClean(run("a tenant login of acme", acmeLogin, true));
    }

    private HostileInputRun.Result run(String role, String login, boolean tenant) throws SQLException, IOException {
        String database = "hostile_" + role.replaceAll("[^a-z]+", "_") + "_" + suffix;
        PostgresTestServer.createDatabaseFrom("hostile", HostileInputRun.SCHEMA,
                template -> PostgresQueue.create(template,
                        PostgresQueueConfig.defaults().schema(HostileInputRun.SCHEMA).listen(false)).close(),
                database);
        try {
            // the roles are the cluster's: the app role exists once a schema set them up
            try (var connection = PostgresTestServer.databaseSource(database).getConnection();
                 var statement = connection.createStatement()) {
                statement.execute("CALL " + HostileInputRun.SCHEMA + ".setup_roles()");
                statement.execute("GRANT " + HostileInputRun.SCHEMA + "_app TO " + appLogin);
            }
            HostileInputRun.Result result = new HostileInputRun(role, database, login, PASSWORD, tenant, acmeLogin,
                    globexLogin).run();
            System.out.println(result.summary());
            results.add(result);
            StringBuilder report = new StringBuilder();
            results.forEach(r -> report.append(r.report()).append('\n'));
            Files.createDirectories(REPORT.getParent());
            Files.writeString(REPORT, report, StandardCharsets.UTF_8);
            return result;
        } finally {
            PostgresTestServer.dropDatabase(database);
        }
    }

    private static void assertClean(HostileInputRun.Result result) {
        assertThat(result.calls()).as("calls tried as %s", result.role()).isGreaterThan(1000);
        assertThat(result.raws()).as("raw errors as %s (see %s):%n%s", result.role(), REPORT,
                        String.join("\n", result.raws().stream().map(HostileInputRun.Raw::line).toList()))
                .isEmpty();
        assertThat(result.violations()).as("leftover changes, locks or dead sessions as %s", result.role()).isEmpty();
    }

    private String login(String name) {
        String role = name + "_" + suffix;
        PostgresTestServer.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + PASSWORD + "'");
        logins.add(role);
        return role;
    }
}
