package dev.queue.api.observation;

import java.time.Duration;

/** How one handler run went, told to the interceptor that asked in {@link QueueInterceptor#onHandle}. */
public interface HandleObservation {

    /**
     * The handler returned or threw, on the thread that ran it (where {@link QueueInterceptor#onHandle} was called):
     * the place to close what was opened there, such as a thread-local scope. The outcome is not known yet.
     *
     * @param duration how long the handler ran, by the queue's clock
     * @param failure what the handler threw, or what made it impossible to run (an undecodable payload); null
     *                when it returned
     */
    default void handlerFinished(Duration duration, Throwable failure) {
    }

    /**
     * The result is recorded, possibly on another thread: acknowledgements are written in batches a few
     * milliseconds later. Called once per run, after {@link #handlerFinished}.
     *
     * @param end the run and what became of the message
     */
    default void ended(HandleEnd end) {
    }
}
