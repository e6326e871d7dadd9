package dev.queue.domain.port;

/**
 * Where a running queue process says it is alive and what it runs, so operators (and the health checks) can tell
 * a topic nobody subscribes from one whose workers fall behind, and a lease holder that died from one still
 * working. One {@link #heartbeat} per process per interval: a small write. A process that stops calls
 * {@link #remove}; one that crashes is shown as gone once its heartbeats stop, and removed after a bound.
 */
public interface WorkerRegistry {

    /** Records the process as alive now, with what it runs; replaces its previous beat. */
    void heartbeat(WorkerBeat beat);

    /** The process stopped: its entry goes. Nothing happens for an unknown id. */
    void remove(String processId);
}
