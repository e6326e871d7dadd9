package dev.queue.spring;

import dev.queue.spring.shop.ShopApplication;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** With queue-dashboard on the class path, queue.dashboard.* serves the operator's page on a port of its own. */
class DashboardWiringTest {

    private final HttpClient http = HttpClient.newHttpClient();

    private static SpringApplicationBuilder app(String... properties) {
        return new SpringApplicationBuilder(ShopApplication.class)
                .properties("spring.datasource.url=" + EmbeddedPostgresServer.jdbcUrl(),
                        "queue.schema=" + EmbeddedPostgresServer.freshSchema("spring_dash"), "queue.namespace=ops")
                .properties(properties);
    }

    @Test
    void anEnabledDashboardServesTheOverviewReadOnlyUnderItsPath() throws Exception {
        try (ConfigurableApplicationContext app = app("queue.dashboard.enabled=true", "queue.dashboard.port=0",
                "queue.dashboard.path=/ops").run()) {
            QueueDashboardServer dashboard = app.getBean(QueueDashboardServer.class);
            assertThat(dashboard.url()).isEqualTo("http://127.0.0.1:" + dashboard.port() + "/ops/");
            app.getBean(QueueTemplate.class).publish("unhandled.audit", Map.of("n", 1));

            HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(dashboard.url())).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("Namespace ops", "unhandled.audit", "read-only", "href=\"/ops/workers\"");

            HttpResponse<String> write = http.send(HttpRequest.newBuilder(URI.create(dashboard.url() + "dead/purge"))
                    .header("Content-Type", "application/x-www-form-urlencoded").header("Origin", "http://127.0.0.1:" + dashboard.port())
                    .POST(HttpRequest.BodyPublishers.ofString("ns=ops&confirm=yes")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(write.statusCode()).isEqualTo(403);
            assertThat(write.body()).contains("read-only");
        }
    }

    @Test
    void theDashboardIsOffUnlessEnabled() {
        try (ConfigurableApplicationContext app = app().run()) {
            assertThat(app.getBeansOfType(QueueDashboardServer.class)).isEmpty();
        }
    }

    @Test
    void aShortWriteTokenStopsTheApplicationNamingTheProperty() {
        assertThatThrownBy(() -> app("queue.dashboard.enabled=true", "queue.dashboard.port=0",
                "queue.dashboard.write-token=short").run())
                .hasRootCauseInstanceOf(dev.queue.api.InvalidInputException.class)
                .rootCause().hasMessageContaining("writeToken");
        assertThatThrownBy(() -> app("queue.dashboard.enabled=true", "queue.dashboard.port=0",
                "queue.dashboard.write-token=short").run())
                .hasStackTraceContaining("invalid property queue.dashboard.write-token: got (5 characters)");
    }
}
