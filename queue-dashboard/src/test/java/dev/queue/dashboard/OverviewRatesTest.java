package dev.queue.dashboard;

import dev.queue.api.Namespace;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.ds.PGSimpleDataSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The overview's rates in and out from a Java queue: publishes counted in the process and flushed, completions
 * from the completion counters, both shown per topic and charted for the last hour.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OverviewRatesTest {

    private final HttpClient http = HttpClient.newHttpClient();
    private Database db;

    @BeforeAll
    void start() throws Exception {
        db = new Database();
    }

    @AfterAll
    void stop() throws Exception {
        db.close();
    }

    private String overview(QueueDashboard.Server server) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + "/")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void publishesAndCompletionsOfAJavaQueueAppearAsRatesAndInTheChart() throws Exception {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(db.url);
        AtomicInteger handled = new AtomicInteger();
        QueueDashboard dashboard = QueueDashboard.builder(db.operator).namespaces(List.of("rates")).countsMaxAge(Duration.ZERO).build();
        try (PostgresQueue queue = PostgresQueue.create(dataSource, PostgresQueueConfig.defaults().schema("queue"));
             QueueDashboard.Server server = dashboard.start("127.0.0.1", 0)) {
            Namespace ns = queue.namespace("rates");
            for (int i = 0; i < 7; i++) {
                ns.publish("invoices", "{}");
            }
            ns.publish("letters", "{}");
            try (Subscription subscription = ns.subscribe(Subscriber.on("invoices").handleDelivery((d, ctx) -> handled.incrementAndGet()))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> handled.get() == 7);
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(overview(server))
                        .contains("last hour: in <b class=\"in\">8</b>, out <b class=\"out\">7</b>")
                        .containsPattern("id=\"topic-invoices\">.*<td class=\"in-hour\">7</td><td class=\"out-hour\">7</td>")
                        .containsPattern("id=\"topic-letters\">.*<td class=\"in-hour\">1</td><td class=\"out-hour\">0</td>")
                        .contains("<svg class=\"rates\"", "<polyline class=\"in\""));
            }
        }
    }
}
