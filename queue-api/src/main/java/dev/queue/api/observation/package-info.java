/**
 * Observation points of a queue, for metrics, tracing, logging context or auditing: a {@link
 * dev.queue.api.observation.QueueInterceptor} registered with {@link dev.queue.api.QueueOptions#interceptor} hears
 * of every publish, every handler run of a subscription and every maintenance pass that changed something. Trace
 * context crosses the queue in message headers, which an interceptor may add before a message is stored.
 */
package dev.queue.api.observation;
