package dev.queue.postgres;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The SQL boundary under hostile input: every public function and procedure of the schema (found in the catalog,
 * so a new one is covered without being listed here), each parameter in turn given NULL, empty, huge, unicode edge
 * cases, injection-shaped text, extreme numbers, intervals and instants, odd JSON and multi-dimensional, empty, huge
 * and NULL-holding arrays ({@link HostileValues}), the other arguments valid. Every call must end in success or a
 * typed error (SQLSTATE class QU): a raw PostgreSQL error, a timeout or an exhausted resource fails the test with
 * the list of them. No call may leave a change behind it, a lock held or more than 1,000 locks taken, and a tenant's
 * successes must leave other namespaces alone ({@link HostileInputRun}). It runs as the migrating role (a
 * superuser), as a login of the app role and as a tenant login granted 'acme' only, each on a copy of the schema of
 * its own; the three runs go at once.
 *
 * <p>Each role prints one summary line; the raw errors, grouped by function and SQLSTATE, are written to
 * target/hostile-input-report.txt.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileInputTest {

    private static final String PASSWORD = "hostile-input-secret";
    private static final Path REPORT = Path.of("target", "hostile-input-report.txt");
    private static final String MIGRATING_ROLE = "the migrating role";
    private static final String APP_LOGIN = "an app login";
    private static final String TENANT_LOGIN = "a tenant login of acme";

    private final String suffix = Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
    private final List<String> logins = new ArrayList<>();
    private final List<String> databases = new ArrayList<>();
    private final Map<String, Future<HostileInputRun.Result>> results = new LinkedHashMap<>();
    private ExecutorService executor;

    @BeforeAll
    void startTheRuns() throws SQLException {
        String appLogin = login("hostile_app");
        String acmeLogin = login("hostile_acme");
        String globexLogin = login("hostile_globex");
        Map<String, HostileInputRun> runs = new LinkedHashMap<>();
        runs.put(MIGRATING_ROLE, run(MIGRATING_ROLE, null, false, acmeLogin, globexLogin));
        // the app role exists once a copy's setup_roles() made it (roles are the cluster's)
        PostgresTestServer.execute("GRANT " + HostileInputRun.SCHEMA + "_app TO " + appLogin);
        runs.put(APP_LOGIN, run(APP_LOGIN, appLogin, false, acmeLogin, globexLogin));
        runs.put(TENANT_LOGIN, run(TENANT_LOGIN, acmeLogin, true, acmeLogin, globexLogin));
        executor = Executors.newFixedThreadPool(runs.size());
        runs.forEach((role, run) -> results.put(role, executor.submit(run::run)));
        executor.shutdown();
    }

    @AfterAll
    void dropDatabasesAndLogins() throws Exception {
        try {
            StringBuilder report = new StringBuilder();
            for (Map.Entry<String, Future<HostileInputRun.Result>> result : results.entrySet()) {
                try {
                    report.append(result.getValue().get().report()).append('\n');
                } catch (ExecutionException e) {
                    report.append("== hostile input as ").append(result.getKey()).append(" did not finish: ")
                            .append(e.getCause()).append("\n\n");
                }
            }
            Files.createDirectories(REPORT.getParent());
            Files.writeString(REPORT, report, StandardCharsets.UTF_8);
        } finally {
            executor.shutdownNow();
            databases.forEach(PostgresTestServer::dropDatabase);
            for (String login : logins) {
                PostgresTestServer.execute("DROP ROLE IF EXISTS " + login);
            }
        }
    }

    @Test
    void theMigratingRoleGetsOnlySuccessesAndTypedErrors() throws Exception {
        assertClean(MIGRATING_ROLE);
    }

    @Test
    void anAppLoginGetsOnlySuccessesAndTypedErrors() throws Exception {
        assertClean(APP_LOGIN);
    }

    @Test
    void aTenantLoginGetsOnlySuccessesAndTypedErrorsAndTouchesNoOtherNamespace() throws Exception {
        assertClean(TENANT_LOGIN);
    }

    /** A copy of the schema with the roles set up and the fixture in place (one after the other: roles are shared). */
    private HostileInputRun run(String role, String login, boolean tenant, String acmeLogin, String globexLogin)
            throws SQLException {
        String database = "hostile_" + role.replaceAll("[^a-z]+", "_") + "_" + suffix;
        PostgresTestServer.createDatabaseFrom("hostile", HostileInputRun.SCHEMA,
                template -> PostgresQueue.create(template,
                        PostgresQueueConfig.defaults().schema(HostileInputRun.SCHEMA).listen(false)).close(),
                database);
        databases.add(database);
        HostileInputRun run = new HostileInputRun(role, database, login, PASSWORD, tenant, acmeLogin, globexLogin);
        run.prepare();
        return run;
    }

    private void assertClean(String role) throws Exception {
        HostileInputRun.Result result = results.get(role).get();
        System.out.println(result.summary());
        assertThat(result.calls()).as("calls tried as %s", role).isGreaterThan(1000);
        assertThat(result.raws()).as("raw errors as %s (all in %s):%n%s", role, REPORT,
                        String.join("\n", result.raws().stream().map(HostileInputRun.Raw::line).toList()))
                .isEmpty();
        assertThat(result.violations()).as("leftover changes, locks, dead sessions or another tenant's rows as %s", role)
                .isEmpty();
    }

    private String login(String name) {
        String role = name + "_" + suffix;
        PostgresTestServer.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + PASSWORD + "'");
        logins.add(role);
        return role;
    }
}
