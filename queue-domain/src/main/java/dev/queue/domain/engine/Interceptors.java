package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.PublishResult;
import dev.queue.api.observation.HandleEnd;
import dev.queue.api.observation.HandleObservation;
import dev.queue.api.observation.HandleOutcome;
import dev.queue.api.observation.HandleStart;
import dev.queue.api.observation.MaintenanceEvent;
import dev.queue.api.observation.PublishEvent;
import dev.queue.api.observation.PublishObservation;
import dev.queue.api.observation.QueueInterceptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * The queue's interceptors, called so that none can break what it observes: each call is guarded, and one that
 * throws is logged (with message id, topic and namespace) and skipped. The engine holds null instead of an empty
 * instance, so a queue without interceptors pays one null check per publish and per handler run.
 */
final class Interceptors {

    private static final Logger log = LoggerFactory.getLogger(Interceptors.class);

    private final QueueInterceptor[] all;

    private Interceptors(List<QueueInterceptor> all) {
        this.all = all.toArray(QueueInterceptor[]::new);
    }

    /** Null when there are none. */
    static Interceptors of(List<QueueInterceptor> interceptors) {
        return interceptors == null || interceptors.isEmpty() ? null : new Interceptors(interceptors);
    }

    /** Tells each interceptor of a publish about to happen; they may add headers to the event's messages. */
    PublishCall publishStarting(String namespace, List<Message> messages, boolean inCallerTransaction) {
        PublishEvent event = new PublishEvent(namespace, messages, inCallerTransaction);
        PublishObservation[] observations = new PublishObservation[all.length];
        for (int i = 0; i < all.length; i++) {
            try {
                observations[i] = all[i].onPublish(event);
            } catch (RuntimeException e) {
                log.warn("interceptor {} failed before a publish of {} messages to topics {} in namespace {}; publishing on: {}",
                        all[i].getClass().getName(), messages.size(), topicsOf(event), namespace, e.toString(), e);
            }
        }
        return new PublishCall(event, observations);
    }

    /** One publish call being observed. */
    static final class PublishCall {
        private final PublishEvent event;
        private final PublishObservation[] observations;

        private PublishCall(PublishEvent event, PublishObservation[] observations) {
            this.event = event;
            this.observations = observations;
        }

        /** The messages to store: as the interceptors left them. */
        List<Message> messages() {
            return event.messages();
        }

        void published(List<PublishResult> results) {
            for (int i = observations.length - 1; i >= 0; i--) {
                PublishObservation observation = observations[i];
                if (observation == null) {
                    continue;
                }
                try {
                    observation.published(event, results);
                } catch (RuntimeException e) {
                    log.warn("interceptor {} failed after a publish of messages {} to topics {} in namespace {}: {}",
                            observation.getClass().getName(), results.stream().map(PublishResult::id).toList(), topicsOf(event),
                            event.namespace(), e.toString(), e);
                }
            }
        }

        void failed(RuntimeException error) {
            for (int i = observations.length - 1; i >= 0; i--) {
                PublishObservation observation = observations[i];
                if (observation == null) {
                    continue;
                }
                try {
                    observation.failed(event, error);
                } catch (RuntimeException e) {
                    log.warn("interceptor {} failed after a failed publish to topics {} in namespace {}: {}",
                            observation.getClass().getName(), topicsOf(event), event.namespace(), e.toString(), e);
                }
            }
        }
    }

    /** Tells each interceptor that a handler run starts, on the thread that runs it. */
    HandleCall handleStarting(Delivery delivery, Instant startedAt) {
        HandleStart start = new HandleStart(delivery, startedAt);
        HandleObservation[] observations = new HandleObservation[all.length];
        for (int i = 0; i < all.length; i++) {
            try {
                observations[i] = all[i].onHandle(start);
            } catch (RuntimeException e) {
                log.warn("interceptor {} failed as message {} (topic {}, namespace {}) started; handling on: {}",
                        all[i].getClass().getName(), delivery.id(), delivery.topic(), delivery.namespace(), e.toString(), e);
            }
        }
        return new HandleCall(start, observations);
    }

    /** One handler run being observed: started, its handler finished, its result recorded (once). */
    static final class HandleCall {
        private final HandleStart start;
        private final HandleObservation[] observations;
        private final AtomicBoolean ended = new AtomicBoolean();
        private volatile Duration handlerDuration = Duration.ZERO;
        private volatile Throwable failure;

        private HandleCall(HandleStart start, HandleObservation[] observations) {
            this.start = start;
            this.observations = observations;
        }

        Instant startedAt() {
            return start.startedAt();
        }

        void handlerFinished(Instant finishedAt, Throwable failure) {
            Duration duration = finishedAt.isBefore(start.startedAt()) ? Duration.ZERO : Duration.between(start.startedAt(), finishedAt);
            this.handlerDuration = duration;
            this.failure = failure;
            Delivery delivery = start.delivery();
            for (int i = observations.length - 1; i >= 0; i--) {
                HandleObservation observation = observations[i];
                if (observation == null) {
                    continue;
                }
                try {
                    observation.handlerFinished(duration, failure);
                } catch (RuntimeException e) {
                    log.warn("interceptor {} failed as the handler of message {} (topic {}, namespace {}) finished: {}",
                            observation.getClass().getName(), delivery.id(), delivery.topic(), delivery.namespace(), e.toString(), e);
                }
            }
        }

        /** The first call wins: a run ends once, whichever path records it. */
        void ended(HandleOutcome outcome, Instant retryAt, String error) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            Delivery delivery = start.delivery();
            HandleEnd end = new HandleEnd(delivery, outcome, start.startedAt(), handlerDuration, retryAt, error, failure);
            for (int i = observations.length - 1; i >= 0; i--) {
                HandleObservation observation = observations[i];
                if (observation == null) {
                    continue;
                }
                try {
                    observation.ended(end);
                } catch (RuntimeException e) {
                    log.warn("interceptor {} failed as message {} (topic {}, namespace {}) ended {}: {}",
                            observation.getClass().getName(), delivery.id(), delivery.topic(), delivery.namespace(), outcome,
                            e.toString(), e);
                }
            }
        }
    }

    void maintenance(MaintenanceEvent event) {
        for (QueueInterceptor interceptor : all) {
            try {
                interceptor.onMaintenance(event);
            } catch (RuntimeException e) {
                log.warn("interceptor {} failed on {} in namespace {}: {}", interceptor.getClass().getName(), event, event.namespace(),
                        e.toString(), e);
            }
        }
    }

    private static String topicsOf(PublishEvent event) {
        return event.messages().stream().map(m -> m == null ? "null" : String.valueOf(m.topic())).distinct()
                .collect(Collectors.joining(", ", "[", "]"));
    }
}
