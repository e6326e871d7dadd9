package dev.queue.spring.shop;

import dev.queue.spring.QueueTemplate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Writes an order and publishes its event in one Spring transaction. */
@Service
public class OrderService {

    /** A topic no handler of the shop subscribes to, so what was stored stays visible to the test. */
    public static final String UNHANDLED_TOPIC = "order.refunded";

    private final JdbcTemplate jdbc;
    private final QueueTemplate queue;

    public OrderService(JdbcTemplate jdbc, QueueTemplate queue) {
        this.jdbc = jdbc;
        this.queue = queue;
        jdbc.execute("CREATE TABLE IF NOT EXISTS public.shop_orders (id text PRIMARY KEY, cents bigint NOT NULL)");
    }

    @Transactional
    public void pay(String orderId, long cents, String topic) {
        jdbc.update("INSERT INTO public.shop_orders (id, cents) VALUES (?, ?)", orderId, cents);
        queue.publish(topic, new OrderPaid(orderId, cents));
    }

    /** Publishes, then fails: the transaction rolls back, the order row and the message with it. */
    @Transactional
    public void payThenFail(String orderId, long cents, String topic) {
        pay(orderId, cents, topic);
        throw new IllegalStateException("payment provider declined order " + orderId);
    }

    public boolean orderExists(String orderId) {
        Integer count = jdbc.queryForObject("SELECT count(*) FROM public.shop_orders WHERE id = ?", Integer.class, orderId);
        return count != null && count > 0;
    }
}
