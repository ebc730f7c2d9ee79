-- Ouyang et al. (SCC 2016), Section III-B: every finished task of the selected
-- jobs, the duration of its successful attempt (SCHEDULE to FINISH, on the
-- machine that ran it) and its z-score within the job (Eq. 1, sample standard
-- deviation). Attempts that started before the window (time 0) or finished
-- after it (2^63-1) have no duration and are left out; so are jobs with fewer
-- than 2 such tasks or with all durations equal (z undefined). A task that
-- finished twice (re-run after a FINISH) counts its last run.
WITH finished AS (
    SELECT a.job_id, a.task_id,
        arg_max(a.machine_id, a.end_us) AS machine_id,
        arg_max(a.start_us, a.end_us)   AS start_us,
        max(a.end_us)                   AS end_us
    FROM task_attempts a
    SEMI JOIN jobs j ON j.trace = '${trace}' AND j.job_id = a.job_id
    WHERE a.trace = '${trace}' AND a.end_event = 4
      AND a.start_us > 0 AND a.end_us < 9223372036854775807 AND a.machine_id IS NOT NULL
    GROUP BY a.job_id, a.task_id
),
per_job AS (
    SELECT *, (end_us - start_us) / 1e6 AS duration_s,
        avg((end_us - start_us) / 1e6) OVER w          AS job_mean_s,
        stddev_samp((end_us - start_us) / 1e6) OVER w  AS job_sd_s,
        count(*) OVER w                                AS job_tasks
    FROM finished
    WINDOW w AS (PARTITION BY job_id)
)
SELECT
    '${trace}' AS trace, job_id, task_id, machine_id, start_us, end_us, duration_s,
    job_mean_s, job_sd_s, job_tasks,
    (duration_s - job_mean_s) / job_sd_s AS z
FROM per_job
WHERE job_tasks >= 2 AND job_sd_s > 0
ORDER BY job_id, task_id
