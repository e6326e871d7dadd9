package dev.queue.api;

/**
 * The store refused the caller's database role access to a namespace (or to the queue's tables): with tenant roles
 * set up (docs/tenants.md), a role uses only the namespaces granted to it. {@link #namespace()} is the namespace
 * refused, null when the store did not say.
 */
public class NamespaceAccessDeniedException extends QueueException {

    private static final long serialVersionUID = 1L;

    private final String namespace;

    public NamespaceAccessDeniedException(String namespace, String message, Throwable cause) {
        super(message, cause);
        this.namespace = namespace;
    }

    public String namespace() {
        return namespace;
    }
}
