package dev.queue.example.shop;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Starts the example as it ships (embedded PostgreSQL, HTTP on a free port) and posts an order. The context closes
 * after the class, queue first and database last; left to the JVM's exit, embedded PostgreSQL's own shutdown hook
 * stopped the server while the queue was still closing, and its close waited for the pool's connection timeout.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class ShopApplicationSmokeTest {

    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*(\\d+)");

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aPostedOrderIsStoredAndItsReceiptIsSentByTheHandler() throws Exception {
        HttpResponse<String> created = send(HttpRequest.newBuilder(uri("/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"customer\":\"ada\",\"totalCents\":4200}")));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        Matcher id = ID.matcher(created.body());
        assertThat(id.find()).as("an id in %s", created.body()).isTrue();

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> order = send(HttpRequest.newBuilder(uri("/orders/" + id.group(1))).GET());
            assertThat(order.statusCode()).isEqualTo(200);
            assertThat(order.body()).contains("\"receiptSent\":true");
        });
    }

    @Test
    void anInvalidOrderIsRefusedAndPublishesNothing() throws Exception {
        HttpResponse<String> refused = send(HttpRequest.newBuilder(uri("/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"customer\":\"ada\",\"totalCents\":0}")));
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).contains("totalCents 0");
    }

    @Test
    void theHealthEndpointShowsTheQueue() throws Exception {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> health = send(HttpRequest.newBuilder(uri("/actuator/health")).GET());
            assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
            assertThat(health.body()).contains("\"queue\"").contains("\"store\":\"reachable\"")
                    .contains("\"listener\":\"listening\"");
        });
    }

    private URI uri(String path) {
        return URI.create("http://localhost:" + port + path);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return http.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
