package dev.queue.spring.bad;

import dev.queue.spring.QueueHandler;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.context.annotation.Import;

/** A handler the starter cannot call: two payload parameters. Outside the shop's package, so only its test sees it. */
public class TwoPayloadsHandler {

    @QueueHandler(topic = "order.paid")
    void onOrderPaid(String first, String second) {
        throw new AssertionError("never subscribed");
    }

    /** An application holding only this handler. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(TwoPayloadsHandler.class)
    public static class Application {
    }
}
