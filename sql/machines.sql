-- One row per machine of machine_events: its platform and capacities from the
-- last ADD or UPDATE row that has them (the server type of Ouyang et al.,
-- Table 2), and how often it was removed. Capacities are normalized (1.0 = the
-- largest machine); NULL where the trace leaves them empty. Rows with a NaN or an infinity and
-- repeated rows are located or quarantined when the view is staged (nodes/build.py); here a
-- non-finite capacity is never taken and a repeated REMOVE counts once.
SELECT
    '${trace}'                                                          AS trace,
    machine_id,
    arg_max(platform_id, time) FILTER (WHERE event_type IN (0, 2) AND cpus IS NOT NULL)  AS platform_id,
    arg_max(cpus, time) FILTER (WHERE event_type IN (0, 2) AND isfinite(cpus))           AS cpus,
    arg_max(memory, time) FILTER (WHERE event_type IN (0, 2) AND isfinite(memory))       AS memory,
    count(DISTINCT time) FILTER (WHERE event_type = 1)                  AS removals
FROM stg_machine_events
GROUP BY machine_id
ORDER BY machine_id
