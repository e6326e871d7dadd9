package dev.queue.api;

/**
 * The store refused the caller's database role access to a namespace (or to the queue's tables): with tenant roles
 * set up (docs/tenants.md), a role uses only the namespaces granted to it. {@link #namespace()} is the namespace
 * refused, null when the store did not say.
 */
public class NamespaceAccessDeniedException extends QueueException {

    private static final long serialVersionUID = 1L;

    /** The namespace refused; null when the store did not say. */
    private final String namespace;

    /**
     * A refusal by the store.
     *
     * @param namespace the namespace refused; null when the store did not say
     * @param message   what was refused and the store's error
     * @param cause     the driver's exception
     */
    public NamespaceAccessDeniedException(String namespace, String message, Throwable cause) {
        super(message, cause);
        this.namespace = namespace;
    }

    /**
     * The namespace the role may not use.
     *
     * @return the namespace name; null when the store did not say
     */
    public String namespace() {
        return namespace;
    }
}
