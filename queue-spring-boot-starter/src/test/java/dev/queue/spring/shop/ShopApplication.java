package dev.queue.spring.shop;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A small application using the starter as users would: a service that publishes, beans that handle. */
@SpringBootApplication
public class ShopApplication {
}
