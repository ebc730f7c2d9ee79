-- The task_events part numbers the mirror holds, from the file names alone (no row is read).
-- A part missing before or inside a task's lifecycle (a gap between parts, or a mirror that does
-- not start at part 0) cuts that lifecycle: task_lifecycle counts such tasks instead of timing them.
CREATE OR REPLACE VIEW stg_task_event_parts AS
SELECT DISTINCT regexp_extract(file, 'part-(\d+)-of-\d+\.csv\.gz$$', 1)::INTEGER AS part_no
FROM glob('${raw_dir}/task_events/part-*-of-*.csv.gz');
