package dev.queue.domain.port;

/** One message (live, dead or archived) of a namespace, by id. */
public record MessageRef(String namespace, long id) {
}
