package dev.queue.postgres;

import org.apache.ibatis.annotations.Param;

/** The wake-up area of {@code WakeUpMapper.xml}: the listener connection's statements and the probe. */
interface WakeUpMapper {

    Integer wake(@Param("payload") String payload);

    void listen();

    void unlisten();

    int backendPid();

    Integer ping();
}
