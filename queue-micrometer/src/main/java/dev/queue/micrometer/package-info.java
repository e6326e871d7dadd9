/**
 * Micrometer metrics for a queue. {@link dev.queue.micrometer.QueueMetrics} is an interceptor (counters and timers
 * of what this process publishes and handles) and a binder of per-topic gauges read from the queue's stats on a
 * schedule. The names, types and tags are listed in docs/observability.md.
 */
package dev.queue.micrometer;
