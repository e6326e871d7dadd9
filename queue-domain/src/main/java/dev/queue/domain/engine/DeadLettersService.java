package dev.queue.domain.engine;

import dev.queue.api.DeadLetter;
import dev.queue.api.DeadLetters;
import dev.queue.api.InvalidInputException;
import dev.queue.api.MessageId;
import dev.queue.api.Page;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.domain.rules.InputRules;

import java.util.List;
import java.util.Optional;

/** The dead letters of one namespace. */
final class DeadLettersService implements DeadLetters {

    private final String namespace;
    private final MessageStore store;
    private final InputRules rules;
    private final CallGate calls;
    private final Clock time;
    private final int batchSize;

    DeadLettersService(String namespace, MessageStore store, InputRules rules, CallGate calls, Clock time, int batchSize) {
        this.namespace = namespace;
        this.store = store;
        this.rules = rules;
        this.calls = calls;
        this.time = time;
        this.batchSize = batchSize;
    }

    @Override
    public List<DeadLetter> list(Page page) {
        return query(null, page);
    }

    @Override
    public List<DeadLetter> list(String topic, Page page) {
        rules.topic(topic);
        return query(topic, page);
    }

    private List<DeadLetter> query(String topic, Page page) {
        if (page == null) {
            throw new InvalidInputException("page", null, "a Page, for example Page.first(50)");
        }
        if (page.limit() < 1 || page.limit() > InputRules.MAX_PULL_LIMIT) {
            throw new InvalidInputException("page limit", page.limit(), "1 to " + InputRules.MAX_PULL_LIMIT);
        }
        long after = page.after() == null ? 0L : page.after().value();
        return calls.call(() -> store.deadLetterList(new DeadLetterQuery(namespace, topic, after, page.limit())));
    }

    @Override
    public Optional<DeadLetter> get(MessageId id) {
        return calls.call(() -> store.deadLetterFind(new MessageRef(namespace, requireId(id))));
    }

    @Override
    public boolean redrive(MessageId id) {
        return calls.call(() -> store.deadLetterRedrive(RedriveCommand.one(namespace, requireId(id), time.commandTime())).redriven() > 0);
    }

    /** Batch after batch, each its own store call, so no call locks or moves more than a batch of rows. */
    @Override
    public int redriveAll(String topic) {
        rules.topic(topic);
        return calls.call(() -> {
            int redriven = 0;
            long after = 0;
            while (true) {
                RedriveResult batch = store.deadLetterRedrive(RedriveCommand.batch(namespace, topic, after, batchSize, time.commandTime()));
                redriven += batch.redriven();
                if (batch.examined() < batchSize) {
                    return redriven;
                }
                after = batch.lastId();
            }
        });
    }

    @Override
    public boolean purge(MessageId id) {
        return calls.call(() -> store.deadLetterPurge(new PurgeCommand(namespace, requireId(id), null, 1)) > 0);
    }

    @Override
    public int purgeAll(String topic) {
        rules.topic(topic);
        return calls.call(() -> purgeInBatches(topic));
    }

    @Override
    public int purgeAll() {
        return calls.call(() -> purgeInBatches(null));
    }

    private int purgeInBatches(String topic) {
        int purged = 0;
        while (true) {
            int batch = store.deadLetterPurge(new PurgeCommand(namespace, null, topic, batchSize));
            purged += batch;
            if (batch < batchSize) {
                return purged;
            }
        }
    }

    private static long requireId(MessageId id) {
        if (id == null) {
            throw new InvalidInputException("id", null, "a message id");
        }
        return id.value();
    }
}
