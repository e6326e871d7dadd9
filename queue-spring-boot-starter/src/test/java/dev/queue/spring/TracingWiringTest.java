package dev.queue.spring;

import dev.queue.opentelemetry.QueueTracing;
import dev.queue.postgres.PostgresQueue;
import dev.queue.spring.shop.ShopApplication;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** An application with an OpenTelemetry bean gets the queue's spans without wiring anything itself. */
class TracingWiringTest {

    private static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    @Configuration(proxyBeanMethods = false)
    static class Telemetry {

        @Bean
        OpenTelemetry openTelemetry() {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build())
                    .build();
        }
    }

    @Test
    void aPublishThroughTheTemplateIsAProducerSpanAndCarriesItsTraceInTheHeaders() {
        String schema = EmbeddedPostgresServer.freshSchema("spring_otel");
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(ShopApplication.class, Telemetry.class)
                .properties("spring.datasource.url=" + EmbeddedPostgresServer.jdbcUrl(), "queue.schema=" + schema,
                        "queue.namespace=traced")
                .run()) {
            assertThat(app.getBeansOfType(QueueTracing.class)).hasSize(1);
            assertThat(app.getBean(PostgresQueue.class).config().queueOptions().interceptors())
                    .hasAtLeastOneElementOfType(QueueTracing.class);

            var id = app.getBean(QueueTemplate.class).publish("unhandled.traced", Map.of("order", "o-1"));

            assertThat(SPANS.getFinishedSpanItems()).filteredOn(span -> span.getKind() == SpanKind.PRODUCER)
                    .extracting(SpanData::getName).contains("publish unhandled.traced");
            assertThat(app.getBean(PostgresQueue.class).namespace("traced").inspect(id).orElseThrow().headers())
                    .containsKey("traceparent");
        }
    }
}
