package dev.queue.spring;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.PublishResult;
import dev.queue.postgres.PostgresNamespace;
import dev.queue.postgres.PostgresQueue;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import javax.sql.DataSource;
import java.sql.Connection;
import java.util.List;

/**
 * Publishes messages, joining Spring's transaction when there is one. Inside a {@code @Transactional} method the
 * message is written on the transaction's own connection, together with the method's business data: it is
 * delivered, and handlers are woken, only when the transaction commits, and a rollback leaves neither a message
 * nor a wake-up. Outside a transaction each publish commits by itself. Thread-safe.
 *
 * <pre>{@code
 * @Transactional
 * public void pay(Order order) {
 *     orders.markPaid(order.id());
 *     queue.publish("order.paid", new OrderPaid(order.id(), order.total()));
 * }
 * }</pre>
 */
public final class QueueTemplate {

    private final PostgresQueue queue;
    private final DataSource dataSource;
    private final PostgresNamespace namespace;

    /**
     * A template publishing to one namespace; the auto-configuration makes one for {@code queue.namespace}.
     *
     * @param queue      the queue
     * @param dataSource the DataSource whose transactions publishes join; the queue's own
     * @param namespace  the namespace to publish to
     * @throws dev.queue.api.InvalidNameException when {@code namespace} is not a valid name
     */
    public QueueTemplate(PostgresQueue queue, DataSource dataSource, String namespace) {
        this.queue = queue;
        this.dataSource = dataSource;
        this.namespace = queue.namespace(namespace);
    }

    /**
     * The same template publishing to another namespace (tenant).
     *
     * @param name the namespace
     * @return a new template
     * @throws dev.queue.api.InvalidNameException when {@code name} is not a valid name
     */
    public QueueTemplate inNamespace(String name) {
        return new QueueTemplate(queue, dataSource, name);
    }

    /**
     * The namespace this template publishes to, for everything else a namespace does (stats, dead letters).
     *
     * @return the namespace
     */
    public PostgresNamespace namespace() {
        return namespace;
    }

    /**
     * Publishes {@code payload}, encoded by the queue's codec, to {@code topic}, in the current transaction when
     * there is one.
     *
     * @param topic   the topic
     * @param payload the payload object
     * @return the new message's id
     * @throws dev.queue.api.InvalidInputException when the topic or payload breaks a rule
     */
    public MessageId publish(String topic, Object payload) {
        PublishResult result = publish(Message.to(topic).payload(payload));
        return result.id();
    }

    /**
     * Publishes one message, in the current transaction when there is one.
     *
     * @param message the message
     * @return the new message's id, or the id of the message already holding its unique key
     * @throws dev.queue.api.InvalidInputException when the message breaks a rule
     */
    public PublishResult publish(Message message) {
        return publishAll(List.of(message)).get(0);
    }

    /**
     * Many messages in one statement: all of them commit or roll back together.
     *
     * @param messages at most 10,000 messages
     * @return one result per message, in order
     * @throws dev.queue.api.InvalidInputException when any message breaks a rule; none is stored
     */
    public List<PublishResult> publishAll(List<Message> messages) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return namespace.publishAll(messages);
        }
        // The connection bound to the transaction (DataSourceTransactionManager, JpaTransactionManager); it is
        // only released here, never committed or closed: the transaction manager does that.
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            return namespace.publishAll(connection, messages);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
