package dev.queue.spring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metadata IDEs complete from lists every {@code queue.*} property with a description and the default it really
 * has: binding each documented default gives the same properties as binding nothing.
 */
class ConfigurationMetadataTest {

    /** Unset means "not used": LISTEN then takes a connection of the application's DataSource. */
    private static final Set<String> WITHOUT_DEFAULT = Set.of("queue.listen-url", "queue.listen-username", "queue.listen-password",
            "queue.dashboard.write-token");

    @Test
    void everyPropertyHasADescriptionAndADefaultEqualToTheRealOne() throws IOException {
        JsonNode metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the metadata the configuration processor generates").isNotNull();
            metadata = new ObjectMapper().readTree(in);
        }
        Map<String, Object> documentedDefaults = new HashMap<>();
        for (JsonNode property : metadata.get("properties")) {
            String name = property.get("name").asText();
            assertThat(property.path("description").asText()).as("description of %s", name).isNotBlank();
            if (WITHOUT_DEFAULT.contains(name)) {
                assertThat(property.has("defaultValue")).as("default of %s", name).isFalse();
                continue;
            }
            assertThat(property.has("defaultValue")).as("default of %s", name).isTrue();
            documentedDefaults.put(name, property.get("defaultValue").asText());
        }
        assertThat(documentedDefaults).containsKeys("queue.schema", "queue.migrate-on-start", "queue.listen",
                "queue.sweep-interval", "queue.notify-window", "queue.handlers.concurrency", "queue.handlers.lease",
                "queue.handlers.shutdown-timeout");

        QueueProperties fromDocumentedDefaults = bind(documentedDefaults);
        QueueProperties unset = bind(Map.of());

        assertThat(fromDocumentedDefaults).usingRecursiveComparison().isEqualTo(unset);
    }

    private static QueueProperties bind(Map<String, Object> values) {
        return new Binder(new MapConfigurationPropertySource(values))
                .bindOrCreate("queue", Bindable.of(QueueProperties.class));
    }
}
