/**
 * OpenTelemetry tracing for a queue: {@link dev.queue.opentelemetry.QueueTracing} carries trace context in message
 * headers and wraps publishing and handling in spans named and attributed by the messaging semantic conventions.
 * The span attributes are listed in docs/observability.md.
 */
package dev.queue.opentelemetry;
