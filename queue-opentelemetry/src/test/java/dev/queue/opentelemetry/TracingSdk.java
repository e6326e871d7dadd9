package dev.queue.opentelemetry;

import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.awaitility.Awaitility;

import java.time.Duration;
import java.util.List;

/** One process's tracing: an SDK that exports every ended span to memory at once, with W3C propagation. */
final class TracingSdk implements AutoCloseable {

    final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();

    /** Waits until {@code count} spans have ended, and returns them in the order they ended. */
    List<SpanData> awaitSpans(int count) {
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> exporter.getFinishedSpanItems().size() >= count);
        List<SpanData> spans = exporter.getFinishedSpanItems();
        if (spans.size() != count) {
            throw new AssertionError("expected " + count + " spans, got " + spans.size() + ": " + spans);
        }
        return spans;
    }

    SpanData named(List<SpanData> spans, String name) {
        return spans.stream().filter(s -> s.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no span named " + name + " in " + spans));
    }

    @Override
    public void close() {
        sdk.close();
    }
}
