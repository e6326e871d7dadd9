package dev.queue.postgres;

import org.apache.ibatis.annotations.Param;

/** The wake-up area of {@code WakeUpMapper.xml}: the listener connection's statements and the probe. */
interface WakeUpMapper {

    Integer wake(@Param("payload") String payload);

    Integer wakeTopic(@Param("namespace") String namespace, @Param("topic") String topic);

    void listen();

    void unlisten();

    int backendPid();

    Integer ping();

    /** The wake mark of each namespace that has one; a namespace nothing was published to yet has none. */
    java.util.List<WakeMark> wakeMarks(@Param("namespaces") String[] namespaces);

    /** The sum of a namespace's wake mark slots: it changes whenever something there became claimable. */
    record WakeMark(String namespace, long mark) {
    }
}
