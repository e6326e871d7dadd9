package dev.queue.cli.python;

import dev.queue.postgres.PostgresOperator;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.File;
import java.util.List;
import java.util.Map;

/**
 * Runs the Python client's tests (clients/python/run-tests) against an embedded PostgreSQL with the queue schema
 * migrated by the project's own migrator, and exits with their exit code. Maven runs it in the verify phase; the
 * server is stopped whatever the tests do.
 *
 * <p>The tests get the server as {@code QUEUE_TEST_DSN} (libpq) and {@code QUEUE_TEST_JDBC_URL}, and this class
 * path as {@code QUEUE_JAVA_CLASSPATH}, so the interoperability tests can start {@link InteropPeer}. When
 * {@code QUEUE_TEST_DSN} is already set, that server is used and none is started.
 */
public final class PythonClientSuite {

    private PythonClientSuite() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: PythonClientSuite <path of clients/python/run-tests>");
            System.exit(2);
        }
        File script = new File(args[0]).getCanonicalFile();
        if (!script.canExecute()) {
            System.err.println("not an executable script: " + script);
            System.exit(2);
        }
        String given = System.getenv("QUEUE_TEST_DSN");
        if (given != null && !given.isBlank()) {
            System.exit(run(script, Map.of()));
        }
        int exitCode;
        try (EmbeddedPostgres postgres = EmbeddedPostgres.builder().start()) {
            String jdbcUrl = postgres.getJdbcUrl("postgres", "postgres");
            PostgresOperator.connect(jdbcUrl, null, null, "queue").migrate();
            String dsn = "host=localhost port=" + postgres.getPort() + " user=postgres dbname=postgres";
            exitCode = run(script, Map.of("QUEUE_TEST_DSN", dsn, "QUEUE_TEST_JDBC_URL", jdbcUrl));
        }
        System.exit(exitCode);
    }

    private static int run(File script, Map<String, String> database) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(List.of(script.getPath())).inheritIO();
        builder.environment().putAll(database);
        builder.environment().put("QUEUE_JAVA_CLASSPATH", System.getProperty("java.class.path"));
        builder.environment().put("QUEUE_JAVA", ProcessHandle.current().info().command().orElse("java"));
        Process process = builder.start();
        try {
            return process.waitFor();
        } finally {
            // an interrupted build must not leave pytest (and its workers) running against a stopped server
            process.descendants().forEach(ProcessHandle::destroy);
            process.destroy();
        }
    }
}
