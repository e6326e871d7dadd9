package dev.queue.api;

/**
 * The entry point: a handle on one queue installation (for Postgres, one schema). Thread-safe; create one
 * per application and close it on shutdown, which closes every subscription it started.
 */
public interface Queue extends AutoCloseable {

    /** The namespace used by applications that never name one. */
    String DEFAULT_NAMESPACE = "default";

    /** A handle bound to one namespace; cheap, and safe to keep. */
    Namespace namespace(String name);

    default Namespace defaultNamespace() {
        return namespace(DEFAULT_NAMESPACE);
    }

    QueueOptions options();

    @Override
    void close();
}
