package dev.queue.spring;

import dev.queue.api.InvalidInputException;
import dev.queue.dashboard.QueueDashboard;
import dev.queue.postgres.PostgresOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The dashboard of {@code queue.dashboard.*} on the application's DataSource, served by its own HTTP server (the
 * application need not have a web server, and the operator's page stays off the application's port). Closed with
 * the context.
 */
public final class QueueDashboardServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(QueueDashboardServer.class);

    private final QueueDashboard.Server server;
    private final String url;

    private QueueDashboardServer(QueueDashboard.Server server, String url) {
        this.server = server;
        this.url = url;
    }

    /**
     * Starts the dashboard.
     *
     * @param dataSource the application's DataSource
     * @param properties the {@code queue.*} properties: the schema, the namespace the overview lists, the dashboard's
     * @return the running dashboard
     * @throws InvalidQueuePropertyException when a {@code queue.dashboard.*} property cannot be honoured
     */
    static QueueDashboardServer start(DataSource dataSource, QueueProperties properties) {
        QueueProperties.Dashboard p = properties.getDashboard();
        PostgresOperator operator = PostgresOperator.create(dataSource, properties.getSchema());
        QueueDashboard.Builder builder = QueueDashboard.builder(operator).namespaces(List.of(properties.getNamespace()));
        check("queue.dashboard.write-token", p.getWriteToken() == null ? null : "(" + p.getWriteToken().length() + " characters)",
                () -> builder.writeToken(p.getWriteToken()));
        check("queue.dashboard.actor", p.getActor(), () -> builder.actor(p.getActor()));
        check("queue.dashboard.path", p.getPath(), () -> builder.basePath(p.getPath()));
        QueueDashboard.Server server;
        try {
            server = check("queue.dashboard.address", p.getAddress() + ":" + p.getPort(),
                    () -> builder.build().start(p.getAddress(), p.getPort()));
        } catch (UncheckedIOException e) {
            throw new InvalidQueuePropertyException("queue.dashboard.port", p.getPort(), "a port the dashboard can listen on", e);
        }
        String host = p.getAddress() == null || p.getAddress().equals("*") ? "localhost" : p.getAddress();
        String url = "http://" + host + ":" + server.port() + p.getPath() + "/";
        LOG.info("queue dashboard on {} ({})", url, p.getWriteToken() == null ? "read-only" : "writes need the token");
        return new QueueDashboardServer(server, url);
    }

    private interface Step<T> {
        T run() throws IOException;
    }

    private static <T> T check(String property, Object shown, Step<T> step) {
        try {
            return step.run();
        } catch (InvalidInputException e) {
            throw new InvalidQueuePropertyException(property, shown, e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The port it listens on (the one chosen when {@code queue.dashboard.port} is 0).
     *
     * @return the port
     */
    public int port() {
        return server.port();
    }

    /**
     * Where the overview is, for example {@code http://127.0.0.1:8081/queue/}.
     *
     * @return the overview's URL
     */
    public String url() {
        return url;
    }

    @Override
    public void close() {
        server.close();
    }
}
