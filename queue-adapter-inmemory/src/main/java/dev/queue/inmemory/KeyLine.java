package dev.queue.inmemory;

import java.util.TreeMap;
import java.util.TreeSet;

/** One ordering key: its head (pending or running), its waiting messages and its dead letters, by id. */
final class KeyLine {
    Msg head;
    final TreeMap<Long, Msg> waiting = new TreeMap<>();
    final TreeSet<Long> dead = new TreeSet<>();
}
