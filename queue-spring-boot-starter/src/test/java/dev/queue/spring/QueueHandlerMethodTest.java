package dev.queue.spring;

import dev.queue.spring.bad.TwoPayloadsHandler;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** A {@link QueueHandler} method the starter cannot call stops the start, naming the method. */
class QueueHandlerMethodTest {

    @Test
    void aHandlerWithTwoPayloadParametersFailsTheStartNamingTheMethod() {
        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(TwoPayloadsHandler.Application.class)
                .properties("spring.datasource.url=" + EmbeddedPostgresServer.jdbcUrl(),
                        "queue.schema=" + EmbeddedPostgresServer.freshSchema("spring_bad"))
                .run().close());

        assertThat(failure).isNotNull();
        assertThat(rootCause(failure))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("onOrderPaid(String, String)")
                .hasMessageContaining("parameter 1 of type java.lang.String");
    }

    private static Throwable rootCause(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
