package dev.queue.example.shop;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.util.Map;

/** {@code POST /orders {"customer": "ada", "totalCents": 4200}}, then {@code GET /orders/{id}}. */
@RestController
@RequestMapping("/orders")
class OrderController {

    /** The body of {@code POST /orders}. */
    record NewOrder(String customer, long totalCents) {
    }

    private final Orders orders;

    OrderController(Orders orders) {
        this.orders = orders;
    }

    @PostMapping
    ResponseEntity<Order> create(@RequestBody NewOrder order) {
        Order paid = orders.pay(order.customer(), order.totalCents());
        return ResponseEntity.created(URI.create("/orders/" + paid.id())).body(paid);
    }

    @GetMapping("/{id}")
    ResponseEntity<Order> get(@PathVariable long id) {
        return ResponseEntity.of(orders.find(id));
    }

    @ExceptionHandler(IllegalArgumentException.class)
    ResponseEntity<Map<String, String>> invalid(IllegalArgumentException e) {
        return ResponseEntity.status(HttpStatus.BAD_REQUEST).body(Map.of("error", e.getMessage()));
    }
}
