-- The report's first section, `traces` (reports/traces.csv): per trace in evaluation_runs, its
-- jobs, how many methods were evaluated and the features they saw (NURD_FEATURE_SET, resolved).
SELECT trace, max(n_jobs) AS jobs, count(DISTINCT method) AS methods,
    string_agg(DISTINCT coalesce(json_extract_string(settings, '$.feature_set_resolved'), 'usage'), ', ')
        AS features
FROM evaluation_runs GROUP BY trace ORDER BY trace
