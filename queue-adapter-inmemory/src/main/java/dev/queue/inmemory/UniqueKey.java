package dev.queue.inmemory;

/** The unique key of a message within its topic: held by at most one pending or running message. */
record UniqueKey(String namespace, String topic, String key) {
}
