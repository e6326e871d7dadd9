package dev.queue.example.shop;

import dev.queue.spring.QueueTemplate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import java.util.List;
import java.util.Optional;

/** The shop's orders, in its own table beside the queue's schema. */
@Service
public class Orders {

    private final JdbcTemplate jdbc;
    private final QueueTemplate queue;

    public Orders(JdbcTemplate jdbc, QueueTemplate queue) {
        this.jdbc = jdbc;
        this.queue = queue;
        jdbc.execute("CREATE TABLE IF NOT EXISTS shop_orders (id bigserial PRIMARY KEY, customer text NOT NULL,"
                + " total_cents bigint NOT NULL, receipt_sent boolean NOT NULL DEFAULT false)");
    }

    /** The order and its order.paid event commit together: no event for an order that was rolled back. */
    @Transactional
    public Order pay(String customer, long totalCents) {
        if (customer == null || customer.isBlank() || totalCents <= 0) {
            throw new IllegalArgumentException("an order needs a customer and a positive total; got customer "
                    + customer + ", totalCents " + totalCents);
        }
        Long id = jdbc.queryForObject("INSERT INTO shop_orders (customer, total_cents) VALUES (?, ?) RETURNING id",
                Long.class, customer, totalCents);
        queue.publish("order.paid", new OrderPaid(id, customer, totalCents));
        return new Order(id, customer, totalCents, false);
    }

    public void markReceiptSent(long orderId) {
        jdbc.update("UPDATE shop_orders SET receipt_sent = true WHERE id = ?", orderId);
    }

    public Optional<Order> find(long id) {
        List<Order> found = jdbc.query("SELECT id, customer, total_cents, receipt_sent FROM shop_orders WHERE id = ?",
                (row, n) -> new Order(row.getLong(1), row.getString(2), row.getLong(3), row.getBoolean(4)), id);
        return found.stream().findFirst();
    }
}
