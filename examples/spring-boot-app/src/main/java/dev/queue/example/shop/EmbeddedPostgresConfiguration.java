package dev.queue.example.shop;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.io.IOException;

/**
 * So that the example runs with nothing installed: a PostgreSQL of its own, started with the application and
 * stopped with it. With {@code example.embedded-postgres=false} Spring Boot builds the DataSource from
 * {@code spring.datasource.*} as usual.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "example.embedded-postgres", havingValue = "true")
class EmbeddedPostgresConfiguration {

    @Bean(destroyMethod = "close")
    EmbeddedPostgres embeddedPostgres() throws IOException {
        return EmbeddedPostgres.builder().start();
    }

    @Bean(destroyMethod = "close")
    HikariDataSource dataSource(EmbeddedPostgres postgres) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(postgres.getJdbcUrl("postgres", "postgres"));
        // the queue keeps one connection for LISTEN; the rest serve requests and handlers
        config.setMaximumPoolSize(12);
        config.setPoolName("shop");
        return new HikariDataSource(config);
    }
}
