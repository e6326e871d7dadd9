package dev.queue.domain.engine;

/** The name a worker goes by when the caller gives none: host and process, so an operator can find it. */
final class WorkerNames {

    private static final String DEFAULT = computeDefault();

    private WorkerNames() {
    }

    static String defaultWorker() {
        return DEFAULT;
    }

    private static String computeDefault() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            host = "host";
        }
        String name = host.strip() + "-" + ProcessHandle.current().pid();
        StringBuilder clean = new StringBuilder();
        for (char c : name.toCharArray()) {
            clean.append(Character.isISOControl(c) ? '_' : c);
        }
        return clean.length() > 100 ? clean.substring(0, 100) : clean.toString();
    }
}
