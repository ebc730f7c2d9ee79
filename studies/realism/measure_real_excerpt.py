"""Measure, on the real Google 2011 excerpt, the numbers the embedded trace is calibrated to.

    python -m studies.realism.measure_real_excerpt [REALDATA_DIR]   (default $NURD_REALDATA_DIR)

Prints a Python dict: quantile knots (inverse-CDF points) and rates, read straight from
the raw files with DuckDB. stragglers/traces/synth/real_excerpt.py holds its output
(docs/SYNTHETIC_TRACE.md says which generator numbers come from it).
Populations: "selected" = production (max scheduling class >= 1) jobs with >= 100 task
indices in task_events parts 0-13; tasks "in window" = first SCHEDULE after time 0.
"""

from __future__ import annotations

import argparse
import os
import pprint

import duckdb

KNOTS = (0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0)
END = 2**63 - 1


def load_events(root: str) -> duckdb.DuckDBPyConnection:
    """A connection with the raw events (views `te`, `je`), one row per task (`t`: first SUBMIT
    and SCHEDULE, last FINISH, final end event, evictions, failures), per job (`j`, `jt`), the
    selected jobs (`sel`) and the jobs killed inside the window (`killed_in_window`).
    studies/realism/per_job_realism.py reads the same tables."""
    con = duckdb.connect()
    con.execute(f"""CREATE VIEW te AS SELECT * FROM read_csv('{root}/task_events/*.csv.gz', header=false,
        auto_detect=false, nullstr='', columns={{'time':'BIGINT','missing_info':'INTEGER','job_id':'BIGINT',
        'task_index':'BIGINT','machine_id':'BIGINT','event_type':'INTEGER','user_name':'VARCHAR',
        'scheduling_class':'INTEGER','priority':'INTEGER','cpu_request':'DOUBLE','memory_request':'DOUBLE',
        'disk_request':'DOUBLE','different_machine':'INTEGER'}})""")
    con.execute(f"""CREATE VIEW je AS SELECT * FROM read_csv('{root}/job_events/*.csv.gz', header=false,
        auto_detect=false, nullstr='', columns={{'time':'BIGINT','missing_info':'INTEGER','job_id':'BIGINT',
        'event_type':'INTEGER','user_name':'VARCHAR','scheduling_class':'INTEGER','job_name':'VARCHAR',
        'logical_job_name':'VARCHAR'}})""")
    con.execute("""CREATE TABLE t AS SELECT job_id, task_index, min(time) FILTER (event_type = 0) AS sub,
        min(time) FILTER (event_type = 1) AS sch, max(time) FILTER (event_type = 4) AS fin,
        arg_max(event_type, {'t': time, 'e': event_type}) FILTER (event_type BETWEEN 2 AND 6) AS fe,
        count(*) FILTER (event_type = 2) AS ev, count(*) FILTER (event_type = 3) AS fl FROM te GROUP BY ALL""")
    con.execute("""CREATE TABLE j AS SELECT job_id, max(scheduling_class) AS mc,
        arg_max(event_type, {'t': time, 'e': event_type}) FILTER (event_type BETWEEN 2 AND 6) AS jfe
        FROM je GROUP BY ALL""")
    con.execute("""CREATE TABLE jt AS SELECT t.job_id, count(*) AS n, any_value(j.mc) AS mc, any_value(j.jfe) AS jfe
        FROM t LEFT JOIN j USING (job_id) GROUP BY 1""")
    con.execute("CREATE TABLE sel AS SELECT * FROM jt WHERE mc >= 1 AND n >= 100")
    # jobs whose last end event is a KILL inside the task_events window (job_events run for the
    # whole month: a job killed later still has its in-window tasks running)
    con.execute("""CREATE TABLE killed_in_window AS SELECT job_id FROM j WHERE jfe = 5 AND job_id IN (
        SELECT job_id FROM je WHERE event_type = 5 GROUP BY job_id HAVING max(time) <= (SELECT max(time) FROM te))""")
    return con


def measure(root: str) -> dict:
    con = load_events(root)
    con.execute(f"""CREATE TABLE lat AS SELECT job_id, (fin - sch) / 1e6 AS l FROM t SEMI JOIN sel USING (job_id)
        WHERE fe = 4 AND sch > 0 AND fin < {END}""")
    con.execute("""CREATE TABLE pj AS SELECT job_id, quantile_cont(l, 0.5) AS p50, quantile_cont(l, 0.9) AS p90
        FROM lat GROUP BY 1 HAVING count(*) >= 100""")
    k = list(KNOTS)
    q = lambda sql: [round(float(x), 6) for x in con.execute(sql).fetchone()[0]]
    one = lambda sql: round(float(con.execute(sql).fetchone()[0]), 6)
    shares = lambda sql: {str(a): round(float(b), 6) for a, b in con.execute(sql).fetchall()}
    return {
        "knots": k,
        "job_p50_latency_s": q(f"SELECT quantile_cont(p50, {k}) FROM pj"),
        "job_log_p90_over_p50": q(f"SELECT quantile_cont(ln(p90 / p50), {k}) FROM pj"),
        "selected_job_tasks": q(f"SELECT quantile_cont(n, {k}) FROM sel"),
        "other_job_tasks": q(f"SELECT quantile_cont(n, {k}) FROM jt WHERE NOT (mc >= 1 AND n >= 100)"),
        "schedule_delay_s": q(f"""SELECT quantile_cont((sch - sub) / 1e6, {k}) FROM t SEMI JOIN sel USING (job_id)
                                  WHERE sch > 0 AND sub > 0"""),
        "other_jobs_per_selected_job": one("SELECT (SELECT count(*) FROM jt) / (SELECT count(*) FROM sel) - 1"),
        "other_jobs_production_share": one("SELECT avg((mc >= 1)::INT) FROM jt WHERE NOT (mc >= 1 AND n >= 100)"),
        "selected_job_end_state": shares("SELECT coalesce(jfe::VARCHAR, 'none'), count(*) / sum(count(*)) OVER () "
                                         "FROM sel GROUP BY 1"),
        "other_job_end_state": shares("SELECT coalesce(jfe::VARCHAR, 'none'), count(*) / sum(count(*)) OVER () "
                                      "FROM jt WHERE NOT (mc >= 1 AND n >= 100) GROUP BY 1"),
        # in-window tasks of selected jobs
        "selected_task_evict_p": one("SELECT avg((ev > 0)::INT) FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0"),
        "selected_task_fail_p": one("SELECT avg((fl > 0)::INT) FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0"),
        "selected_task_end_state": shares("""SELECT coalesce(fe::VARCHAR, 'none'), count(*) / sum(count(*)) OVER ()
                                             FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0 GROUP BY 1"""),
        "killed_job_task_end_state": shares("""SELECT coalesce(fe::VARCHAR, 'none'), count(*) / sum(count(*)) OVER ()
                                               FROM t SEMI JOIN (SELECT job_id FROM sel WHERE jfe = 5) USING (job_id)
                                               WHERE sch > 0 GROUP BY 1"""),
        # generator 3: evictions and waits per job (generator 2 drew both per task from the pooled
        # rates, which put 5.3% evicted tasks among the finished ones (real: 0.30%) and made 39% of
        # the end-to-end stragglers stragglers through their wait alone (real: 9%))
        "selected_job_evicted_share": q(f"""SELECT quantile_cont(s, {k}) FROM (SELECT avg((ev > 0)::INT) AS s
                                            FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0 GROUP BY job_id)"""),
        "evictions_per_evicted_task": shares("""SELECT least(ev, 5)::VARCHAR, count(*) / sum(count(*)) OVER ()
                                                FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0 AND ev > 0 GROUP BY 1"""),
        "evict_reschedule_delay_s": q(f"""SELECT quantile_cont((ns - et) / 1e6, {k}) FROM (
                SELECT e.time AS et, (SELECT min(b.time) FROM te b WHERE b.job_id = e.job_id
                    AND b.task_index = e.task_index AND b.event_type = 1 AND b.time > e.time) AS ns
                FROM te e SEMI JOIN sel USING (job_id) WHERE e.event_type = 2) WHERE ns IS NOT NULL"""),
        "selected_job_median_schedule_delay_s": q(f"""SELECT quantile_cont(m, {k}) FROM (
                SELECT median((sch - sub) / 1e6) AS m FROM t SEMI JOIN sel USING (job_id)
                WHERE sch > 0 AND sub > 0 GROUP BY job_id HAVING count(*) >= 20)"""),
        "schedule_delay_over_job_median": q(f"""SELECT quantile_cont(d / greatest(m, 1e-3), {k}) FROM (
                SELECT (sch - sub) / 1e6 AS d, median((sch - sub) / 1e6) OVER (PARTITION BY job_id) AS m,
                       count(*) OVER (PARTITION BY job_id) AS n
                FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0 AND sub > 0) WHERE n >= 20"""),
        "evicted_task_end_state": shares("""SELECT coalesce(fe::VARCHAR, 'none'), count(*) / sum(count(*)) OVER ()
                                            FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0 AND ev > 0 GROUP BY 1"""),
        "killed_job_finished_share": q(f"""SELECT quantile_cont(s, {k}) FROM (
                SELECT avg((fe = 4)::INT) AS s FROM t SEMI JOIN sel USING (job_id) SEMI JOIN killed_in_window USING (job_id)
                WHERE sch > 0 GROUP BY job_id HAVING count(*) >= 100)"""),
        # checks, not drawn from: finished tasks of selected jobs
        "finished_task_evicted_share": one("""SELECT avg((ev > 0)::INT) FROM t SEMI JOIN sel USING (job_id)
                                              WHERE fe = 4 AND sch > 0"""),
        "other_task_evict_p": one("""SELECT avg((ev > 0)::INT) FROM t
                                     SEMI JOIN (SELECT job_id FROM jt WHERE NOT (mc >= 1 AND n >= 100)) USING (job_id)
                                     WHERE sch > 0"""),
        "other_task_fail_p": one("""SELECT avg((fl > 0)::INT) FROM t
                                    SEMI JOIN (SELECT job_id FROM jt WHERE NOT (mc >= 1 AND n >= 100)) USING (job_id)
                                    WHERE sch > 0"""),
        "never_scheduled_p": one("SELECT avg((sch IS NULL)::INT) FROM t"),
    } | {
        f"usage_{c}": q(f"""SELECT quantile_cont({c}, {k}) FROM read_csv('{root}/samples/task_usage_part-00000_first_10000_rows.csv',
                          header = true) WHERE {c} IS NOT NULL""")
        for c in ("cpu_rate", "canonical_memory", "total_page_cache", "disk_io_time", "cpi", "mai")
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m studies.realism.measure_real_excerpt",
                                 description="The numbers the embedded trace is calibrated to, measured on the "
                                             "real Google 2011 excerpt (printed as a Python dict).")
    ap.add_argument("realdata", nargs="?", default=os.environ.get("NURD_REALDATA_DIR", "../shared/realdata"),
                    help="the real data (default $NURD_REALDATA_DIR or ../shared/realdata)")
    pprint.pprint(measure(os.path.join(ap.parse_args().realdata, "google_2011")), width=110, sort_dicts=False)
