package dev.queue.api;

/**
 * The entry point: a handle on one queue installation (for Postgres, one schema). Thread-safe; create one
 * per application and close it on shutdown, which closes every subscription it started.
 */
public interface Queue extends AutoCloseable {

    /** The namespace used by applications that never name one. */
    String DEFAULT_NAMESPACE = "default";

    /**
     * A handle bound to one namespace; cheap, and safe to keep. Namespaces need no creating: one exists once named.
     *
     * @param name 1 to 64 characters: letters, digits, {@code .}, {@code _} or {@code -}, starting with a letter or
     *             digit
     * @return the namespace's handle
     * @throws InvalidNameException when the name breaks the rule
     * @throws QueueClosedException when the queue is closed
     */
    Namespace namespace(String name);

    /**
     * The namespace named {@value #DEFAULT_NAMESPACE}.
     *
     * @return its handle
     */
    default Namespace defaultNamespace() {
        return namespace(DEFAULT_NAMESPACE);
    }

    /**
     * The options the queue was created with.
     *
     * @return the options
     */
    QueueOptions options();

    /**
     * Closes the queue: refuses new calls with {@link QueueClosedException}, waits up to
     * {@link QueueOptions#closeTimeout()} for calls already running, then closes every subscription (each waiting
     * up to its shutdown timeout for its handlers) and releases the store. Safe to call more than once.
     */
    @Override
    void close();
}
