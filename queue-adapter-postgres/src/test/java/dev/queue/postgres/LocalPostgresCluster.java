package dev.queue.postgres;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL cluster of the operating system's own server binaries (Debian's {@code postgresql-15},
 * {@code /usr/lib/postgresql/15/bin}), for tests that need what the embedded server of {@link PostgresTestServer}
 * cannot give: extensions of Debian packages ({@code plpgsql_check}), a {@link LocalPgBouncer} in front, or a
 * streaming standby behind ({@link Builder#standbyOf}) to promote.
 *
 * <p>{@link #startNew()} (or {@link #builder()} with extra settings) runs {@code initdb} (superuser
 * {@code postgres}, trust authentication, UTF-8, locale C) into a new temporary directory, picks a free port, listens
 * on localhost only (its Unix socket is in that directory too, never in {@code /var/run/postgresql}) and starts the
 * server with {@code pg_ctl start -w}. {@link #stop()} and {@link #start()} stop and restart the same cluster;
 * {@link #close()} stops it ({@code -m fast}) and deletes the directory; a JVM exiting without {@code close()} still
 * stops the server. As root, which PostgreSQL refuses to run as, the programs run as the OS user {@code postgres}
 * ({@code runuser -u postgres --}), who then owns the directory.
 *
 * <p>Tests call {@link #assumeAvailable()} first: without the binaries (or, as root, without the OS user) the test
 * is skipped with the reason, except on CI ({@code CI=true}), where that fails, as the dashboard's browser test does.
 */
public final class LocalPostgresCluster implements AutoCloseable {

    /** Debian's PostgreSQL 15 server programs (package postgresql-15). */
    public static final Path DEBIAN_BINARIES = Path.of("/usr/lib/postgresql/15/bin");
    /** The OS user the server runs as when the tests run as root; Debian's postgresql-common creates it. */
    public static final String OS_USER = "postgres";
    /** The database superuser initdb creates, with trust authentication from localhost. */
    public static final String SUPERUSER = "postgres";

    private static final long TIMEOUT_SECONDS = 120;

    private final Path binaries;
    private final Path directory;
    private final Path data;
    private final Path log;
    private final int port;
    private final Thread shutdownHook;
    private boolean running;
    private boolean closed;

    private LocalPostgresCluster(Builder builder) throws IOException {
        this.binaries = builder.binaries;
        String problem = unavailableReason(binaries);
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
        this.directory = Files.createTempDirectory("queue-pg-");
        this.data = directory.resolve("data");
        this.log = directory.resolve("server.log");
        boolean initialized = false;
        try {
            if (isRoot()) {
                // the temporary directory is root's and 0700: hand it to the server's user (/tmp itself is 1777)
                UserPrincipalLookupService users = directory.getFileSystem().getUserPrincipalLookupService();
                PosixFileAttributeView view = Files.getFileAttributeView(directory, PosixFileAttributeView.class,
                        LinkOption.NOFOLLOW_LINKS);
                GroupPrincipal group = users.lookupPrincipalByGroupName(OS_USER);
                view.setOwner(users.lookupPrincipalByName(OS_USER));
                view.setGroup(group);
            }
            if (builder.primary == null) {
                run(List.of(program("initdb"), "-D", data.toString(), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                        "--locale=C", "--no-instructions"), "initdb");
            } else {
                // -R writes standby.signal and primary_conninfo; the copied postgresql.conf gets our lines below
                run(List.of(program("pg_basebackup"), "-D", data.toString(), "-h", "localhost", "-p",
                        Integer.toString(builder.primary.port()), "-U", SUPERUSER, "-R", "-X", "stream", "-c", "fast"),
                        "pg_basebackup");
            }
            this.port = freePort();
            StringBuilder conf = new StringBuilder("\n# LocalPostgresCluster\n");
            Map<String, String> settings = new LinkedHashMap<>();
            settings.put("listen_addresses", "localhost");
            settings.put("port", Integer.toString(port));
            settings.put("unix_socket_directories", directory.toString());
            // durability is not under test (as in PostgresTestServer)
            settings.put("fsync", "off");
            settings.put("synchronous_commit", "off");
            settings.put("full_page_writes", "off");
            settings.putAll(builder.settings);
            settings.forEach((name, value) -> conf.append(name).append(" = '").append(value.replace("'", "''"))
                    .append("'\n"));
            // postgresql.conf stays the server user's: root appends to the file, it does not re-create it
            Files.writeString(data.resolve("postgresql.conf"), conf, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            initialized = true;
        } finally {
            if (!initialized) {
                deleteDirectory();
            }
        }
        this.shutdownHook = new Thread(this::stopQuietly, "local-postgres-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            start();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** A new cluster of Debian's PostgreSQL 15 with the default settings, started. */
    public static LocalPostgresCluster startNew() {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Why no cluster can start here (no binaries; as root, no OS user to run them), or null when it can. */
    public static String unavailableReason() {
        return unavailableReason(DEBIAN_BINARIES);
    }

    private static String unavailableReason(Path binaries) {
        for (String name : List.of("initdb", "pg_ctl", "postgres", "pg_basebackup")) {
            if (!Files.isExecutable(binaries.resolve(name))) {
                return "no " + binaries.resolve(name) + " (apt-get install postgresql-15)";
            }
        }
        if (isRoot()) {
            if (!Files.isExecutable(Path.of("/usr/sbin/runuser")) && !Files.isExecutable(Path.of("/sbin/runuser"))) {
                return "running as root needs runuser (util-linux) to start PostgreSQL as another user";
            }
            try {
                directoryUsers().lookupPrincipalByName(OS_USER);
            } catch (IOException e) {
                return "running as root needs the OS user " + OS_USER + " to start PostgreSQL as "
                        + "(apt-get install postgresql-15 creates it)";
            }
        }
        return null;
    }

    /**
     * Skips the calling test when no cluster can start here, with the reason; on CI ({@code CI=true}) fails
     * instead, so CI never passes without having run it.
     */
    public static void assumeAvailable() {
        assumePrerequisite(unavailableReason());
    }

    /**
     * Skips the calling test with {@code missing} as the reason, or on CI ({@code CI=true}) fails with it; does
     * nothing when {@code missing} is null. For further prerequisites of a test (an extension, a program).
     */
    public static void assumePrerequisite(String missing) {
        if (missing == null) {
            return;
        }
        if ("true".equals(System.getenv("CI"))) {
            throw new IllegalStateException(missing + ": CI=true needs this test to run");
        }
        Assumptions.abort(missing);
    }

    /** {@code jdbc:postgresql://localhost:port/postgres?user=postgres}. */
    public String jdbcUrl() {
        return jdbcUrl("postgres");
    }

    public String jdbcUrl(String database) {
        return "jdbc:postgresql://localhost:" + port + "/" + database + "?user=" + SUPERUSER;
    }

    public int port() {
        return port;
    }

    /** The data directory (PGDATA); its {@code postgresql.conf} ends with this class's settings. */
    public Path dataDirectory() {
        return data;
    }

    /** The server's log (pg_ctl -l): stderr of the postmaster and its backends. */
    public Path logFile() {
        return log;
    }

    public synchronized boolean isRunning() {
        return running;
    }

    /** Starts the stopped server again (same data, port and settings); waits until it accepts connections. */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        if (!running) {
            run(List.of(program("pg_ctl"), "start", "-w", "-t", Long.toString(TIMEOUT_SECONDS), "-D", data.toString(),
                    "-l", log.toString()), "pg_ctl start");
            running = true;
        }
    }

    /** Stops the server ({@code pg_ctl stop -m fast}: sessions are disconnected) and waits until it has. */
    public synchronized void stop() {
        if (running) {
            run(List.of(program("pg_ctl"), "stop", "-w", "-t", Long.toString(TIMEOUT_SECONDS), "-m", "fast", "-D",
                    data.toString()), "pg_ctl stop");
            running = false;
        }
    }

    /**
     * Stops the server as a crash would ({@code pg_ctl stop -m immediate}): no shutdown checkpoint, sessions cut,
     * whatever a standby has not received stays behind.
     */
    public synchronized void stopImmediately() {
        if (running) {
            run(List.of(program("pg_ctl"), "stop", "-w", "-t", Long.toString(TIMEOUT_SECONDS), "-m", "immediate",
                    "-D", data.toString()), "pg_ctl stop -m immediate");
            running = false;
        }
    }

    /**
     * Makes every commit of this server wait until a standby has flushed it ({@code synchronous_standby_names =
     * '*'}, {@code synchronous_commit = on}); with no standby connected, commits wait. Set after the standby's
     * base backup, so the standby does not copy it.
     */
    public void requireSynchronousStandby() {
        alterSystem("ALTER SYSTEM SET synchronous_standby_names = '*'", "ALTER SYSTEM SET synchronous_commit = on");
    }

    /** True once this server replays WAL as a standby ({@code pg_is_in_recovery()}). */
    public boolean inRecovery() {
        try (Connection connection = DriverManager.getConnection(jdbcUrl());
             Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery("SELECT pg_is_in_recovery()")) {
            result.next();
            return result.getBoolean(1);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot ask " + jdbcUrl() + " whether it is a standby", e);
        }
    }

    /**
     * Promotes this standby to a primary ({@code pg_ctl promote -w}), and clears a synchronous_standby_names it may
     * have copied from its primary: the promoted server has no standby, and would make every commit wait for one.
     */
    public synchronized void promote() {
        run(List.of(program("pg_ctl"), "promote", "-w", "-t", Long.toString(TIMEOUT_SECONDS), "-D", data.toString()),
                "pg_ctl promote");
        alterSystem("ALTER SYSTEM RESET synchronous_standby_names");
    }

    private void alterSystem(String... statements) {
        try (Connection connection = DriverManager.getConnection(jdbcUrl());
             Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
            statement.execute("SELECT pg_reload_conf()");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot change the settings of " + jdbcUrl() + ": " + e.getMessage(), e);
        }
    }

    /**
     * A pgjdbc URL naming every server, for a client that follows the primary: {@code targetServerType=primary}
     * makes the driver try them in order and keep the one that accepts writes.
     */
    public static String multiHostUrl(List<LocalPostgresCluster> servers, String database) {
        StringBuilder hosts = new StringBuilder();
        for (LocalPostgresCluster server : servers) {
            hosts.append(hosts.length() == 0 ? "" : ",").append("localhost:").append(server.port());
        }
        return "jdbc:postgresql://" + hosts + "/" + database + "?user=" + SUPERUSER + "&targetServerType=primary";
    }

    /** Stops the server and deletes its directory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        try {
            stop();
        } finally {
            closed = true;
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException ignored) {
                // the JVM is exiting: the hook stops the server
            }
            deleteDirectory();
        }
    }

    private void stopQuietly() {
        try {
            stop();
        } catch (RuntimeException ignored) {
            // the JVM is exiting anyway
        }
    }

    private String program(String name) {
        return binaries.resolve(name).toString();
    }

    /** Runs a server program (as the OS user postgres when root), its output into a file; fails with it. */
    private void run(List<String> command, String what) {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of("runuser", "-u", OS_USER, "--"));
        }
        full.addAll(command);
        try {
            Path output = Files.createTempFile(directory, "command-", ".out");
            try {
                // a file, not a pipe: the postmaster pg_ctl starts must not hold our pipe open
                Process process = new ProcessBuilder(full).directory(directory.toFile())
                        .redirectErrorStream(true).redirectOutput(output.toFile()).start();
                if (!process.waitFor(TIMEOUT_SECONDS + 30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new IllegalStateException(what + " did not finish in " + TIMEOUT_SECONDS + " s" + details(output));
                }
                if (process.exitValue() != 0) {
                    throw new IllegalStateException(what + " failed (exit " + process.exitValue() + ")" + details(output));
                }
            } finally {
                Files.deleteIfExists(output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(what, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(what + " interrupted", e);
        }
    }

    private String details(Path output) throws IOException {
        StringBuilder details = new StringBuilder(":\n").append(Files.readString(output, StandardCharsets.UTF_8));
        if (Files.isReadable(log)) {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            details.append("\nserver log:\n")
                    .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())));
        }
        return details.toString();
    }

    private void deleteDirectory() {
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + directory, e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static UserPrincipalLookupService directoryUsers() {
        return Path.of("/").getFileSystem().getUserPrincipalLookupService();
    }

    /** Settings beyond the defaults, for the tests that need more (a replica's WAL settings, say). */
    public static final class Builder {

        private Path binaries = DEBIAN_BINARIES;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private LocalPostgresCluster primary;

        private Builder() {
        }

        /**
         * A streaming standby of {@code primary} ({@code pg_basebackup -R -X stream}) instead of a new cluster: it
         * replays what the primary writes until {@link #promote()}. The primary's default WAL settings suffice.
         */
        public Builder standbyOf(LocalPostgresCluster primary) {
            this.primary = primary;
            return this;
        }

        /** A directory with initdb, pg_ctl and postgres other than Debian's PostgreSQL 15. */
        public Builder binaries(Path directory) {
            this.binaries = directory;
            return this;
        }

        /** A line {@code name = 'value'} of postgresql.conf (later ones win, also over the defaults). */
        public Builder setting(String name, String value) {
            settings.put(name, value);
            return this;
        }

        public LocalPostgresCluster start() {
            try {
                return new LocalPostgresCluster(this);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a PostgreSQL cluster", e);
            }
        }
    }
}
