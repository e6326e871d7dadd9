package dev.queue.postgres;

import org.apache.ibatis.annotations.Param;

import java.util.List;

/** The maintenance and schema area of {@code MaintenanceMapper.xml}: vacuum, queue policies, migrations. */
interface MaintenanceMapper {

    /** What holds the vacuum horizon; nulls where the holder has no such attribute. */
    record HorizonRow(String holder, Integer pid, String applicationName, String state, String horizon, Integer xidAge,
                      Long openSeconds, Long openMillis, String xactStart, String queryStart) {
    }

    record Version(int version, String description, long checksum) {
    }

    record FunctionFile(String file, long checksum) {
    }

    /** A row of queue_policies as the Java configuration writes it (namespace '*'). */
    record Policy(String namespace, String topic, int maxAttempts, long baseMicros, long capMicros, double multiplier,
                  double jitter, int maxPayloadBytes, boolean archive) {
    }

    Long deadTuples();

    HorizonRow vacuumHorizon();

    Boolean vacuumInProgress();

    void vacuumMessages();

    /** Sets the factory's actor for the rest of the transaction (see MaintenanceMapper.xml). */
    String actLocally();

    Integer writePolicy(Policy policy);

    Boolean tablesPresent();

    Integer lockMigrations(@Param("schemaName") String schemaName);

    void createSchema();

    Boolean schemaVersionPresent();

    void createSchemaVersion();

    List<Version> appliedVersions();

    void recordVersion(@Param("version") int version, @Param("description") String description,
                       @Param("checksum") long checksum);

    void createSchemaFunctions();

    List<FunctionFile> appliedFunctionFiles();

    void recordFunctionFile(@Param("file") String file, @Param("checksum") long checksum);
}
