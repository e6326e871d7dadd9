/**
 * The ports the domain drives: {@link dev.queue.domain.port.MessageStore} (the truth about messages),
 * {@link dev.queue.domain.port.ScheduleStore}, {@link dev.queue.domain.port.WakeUps} (a tap on the shoulder when
 * something may be ready) and {@link dev.queue.domain.port.Clock}. Every store method takes one parameter record,
 * names are noun first with the guard in them ({@code messageAckIfLeased}), and store commands carry their time as
 * a {@link dev.queue.domain.port.CommandTime}. No JDBC, MyBatis or Jackson type crosses these interfaces; adapters
 * translate their driver errors into {@link dev.queue.api.StoreUnavailableException} in one place.
 */
package dev.queue.domain.port;
