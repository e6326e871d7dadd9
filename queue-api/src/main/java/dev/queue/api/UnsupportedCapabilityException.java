package dev.queue.api;

/** A call that needs something this queue was not built with: schedules on an adapter without a schedule store, say. */
public class UnsupportedCapabilityException extends QueueException {

    private static final long serialVersionUID = 1L;

    /** What the call needed. */
    private final String capability;

    /**
     * A capability missing.
     *
     * @param capability  what the call needed, for example {@code schedules}
     * @param explanation why this queue does not have it
     */
    public UnsupportedCapabilityException(String capability, String explanation) {
        super(capability + " is not available on this queue: " + explanation);
        this.capability = capability;
    }

    /**
     * What the call needed.
     *
     * @return the capability, for example {@code schedules}
     */
    public String capability() {
        return capability;
    }
}
