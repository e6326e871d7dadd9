package dev.queue.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway PgBouncer (Debian's package, {@code /usr/sbin/pgbouncer}) in transaction pooling mode in front of a
 * {@link LocalPostgresCluster}: it writes an ini file and a user list into a new temporary directory, listens on a
 * free port of localhost, and lets a test kill it ({@code SIGKILL}, as a crash) and start it again on the same
 * port. As root it runs with {@code -u postgres}, since PgBouncer refuses to run as root. {@link #close()} kills it
 * and deletes the directory; a JVM exiting without {@code close()} still kills it.
 *
 * <p>pgjdbc needs {@code prepareThreshold=0} behind PgBouncer before 1.21, which {@link #jdbcUrl(String)} sets:
 * server-side prepared statements would land on whichever server connection the next transaction gets.
 */
public final class LocalPgBouncer implements AutoCloseable {

    /** Debian's PgBouncer (package pgbouncer). */
    public static final Path BINARY = Path.of("/usr/sbin/pgbouncer");

    private static final long START_TIMEOUT_MILLIS = 30_000;

    private final Path directory;
    private final Path ini;
    private final Path log;
    private final int port;
    private final Thread shutdownHook;
    private Process process;
    private boolean closed;

    private LocalPgBouncer(LocalPostgresCluster server, int poolSize) throws IOException {
        if (unavailableReason() != null) {
            throw new IllegalStateException(unavailableReason());
        }
        this.directory = Files.createTempDirectory("queue-pgbouncer-");
        this.ini = directory.resolve("pgbouncer.ini");
        this.log = directory.resolve("pgbouncer.log");
        this.port = freePort();
        Path users = directory.resolve("userlist.txt");
        Files.writeString(users, "\"" + LocalPostgresCluster.SUPERUSER + "\" \"\"\n", StandardCharsets.UTF_8);
        String config = String.join("\n",
                "[databases]",
                "* = host=localhost port=" + server.port(),
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                "listen_port = " + port,
                // no socket in /var/run/postgresql: several instances (and the system's) must not collide
                "unix_socket_dir =",
                "auth_type = trust",
                "auth_file = " + users,
                "pool_mode = transaction",
                "default_pool_size = " + poolSize,
                "max_client_conn = 1000",
                // pgjdbc sends extra_float_digits at startup, which PgBouncer does not track
                "ignore_startup_parameters = extra_float_digits",
                "logfile = " + log,
                "pidfile = " + directory.resolve("pgbouncer.pid"),
                "server_login_retry = 1",
                "");
        Files.writeString(ini, config, StandardCharsets.UTF_8);
        if ("root".equals(System.getProperty("user.name"))) {
            // PgBouncer switches to the postgres user, who must read the files and write the log and pid file
            java.nio.file.attribute.UserPrincipalLookupService lookup =
                    directory.getFileSystem().getUserPrincipalLookupService();
            for (Path path : List.of(directory, ini, users)) {
                Files.setOwner(path, lookup.lookupPrincipalByName(LocalPostgresCluster.OS_USER));
            }
        }
        this.shutdownHook = new Thread(this::kill, "local-pgbouncer-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            start();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** A PgBouncer in transaction mode in front of {@code server}, with server pools of {@code poolSize}, started. */
    public static LocalPgBouncer startInFrontOf(LocalPostgresCluster server, int poolSize) {
        try {
            return new LocalPgBouncer(server, poolSize);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot set up a PgBouncer", e);
        }
    }

    /** Why no PgBouncer can start here, or null when it can. */
    public static String unavailableReason() {
        if (!Files.isExecutable(BINARY)) {
            return "no " + BINARY + " (apt-get install pgbouncer)";
        }
        return null;
    }

    /** Skips the calling test without PgBouncer (or fails on CI), as {@link LocalPostgresCluster#assumeAvailable()}. */
    public static void assumeAvailable() {
        LocalPostgresCluster.assumePrerequisite(unavailableReason());
    }

    /** A pgjdbc URL through PgBouncer: {@code prepareThreshold=0}, since PgBouncer 1.18 keeps no prepared statements. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + LocalPostgresCluster.SUPERUSER
                + "&prepareThreshold=0";
    }

    public int port() {
        return port;
    }

    public Path logFile() {
        return log;
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Starts PgBouncer (again) on its port and waits until it accepts connections. */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        if (isRunning()) {
            return;
        }
        List<String> command = new ArrayList<>(List.of(BINARY.toString()));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", LocalPostgresCluster.OS_USER));
        }
        command.add(ini.toString());
        try {
            process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("stdout.log").toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("pgbouncer exited with " + process.exitValue() + ":\n" + tail());
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                return;
            } catch (IOException notYet) {
                sleep(20);
            }
        }
        kill();
        throw new IllegalStateException("pgbouncer did not listen on port " + port + " within "
                + START_TIMEOUT_MILLIS + " ms:\n" + tail());
    }

    /** Kills PgBouncer at once ({@code SIGKILL}): every client connection breaks, as in a crash. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("pgbouncer (pid " + process.pid() + ") did not die");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** Kills PgBouncer and deletes its directory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        kill();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException ignored) {
            // the JVM is exiting: the hook kills it
        }
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + directory, e);
        }
    }

    private String tail() {
        StringBuilder text = new StringBuilder();
        for (Path file : List.of(directory.resolve("stdout.log"), log)) {
            try {
                if (Files.isReadable(file)) {
                    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                    text.append(String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())))
                            .append('\n');
                }
            } catch (IOException e) {
                text.append("(cannot read ").append(file).append(")\n");
            }
        }
        return text.toString();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
