package dev.queue.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Stream;

/**
 * The 27 migrations of the last 0.1.0 snapshot, kept in the tests only: the baseline and the function files must
 * install the same schema they did ({@code SquashedSchemaTest}), and a schema they installed must be refused.
 */
final class SnapshotMigrations {

    static final int LAST = 27;

    private static final String DIRECTORY = "db/queue-snapshot";

    private SnapshotMigrations() {
    }

    /** The script of one version, with its {@code ${schema}} placeholder. */
    static String script(int version) {
        String prefix = "V" + version + "__";
        try (Stream<Path> files = Files.list(directory())) {
            List<Path> matches = files.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
            if (matches.size() != 1) {
                throw new IllegalStateException("expected one snapshot migration " + prefix + "*, found " + matches);
            }
            return Files.readString(matches.get(0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path directory() {
        try {
            return Paths.get(SnapshotMigrations.class.getClassLoader().getResource(DIRECTORY).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
