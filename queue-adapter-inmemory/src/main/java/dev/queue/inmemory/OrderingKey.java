package dev.queue.inmemory;

/** The ordering key of a message within its topic: the messages of one key run one at a time, in id order. */
record OrderingKey(String namespace, String topic, String key) {
}
