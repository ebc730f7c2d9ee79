-- The comparison named before it is scored (stragglers/prediction/verdicts/verdict.py, budgets.py): per (trace,
-- budget), the split (the rolling origin: a job is scored once ``warmup`` jobs ended before it started,
-- and named on those, its choosing jobs: their fewest, median and most), the learned method and the
-- free rule named now (on the last scored job's choosing jobs: each named only where its mean cut there
-- exceeds its minimum detectable effect, else none: "no winner", said in *_words), how often each was
-- named over the scored jobs (*_named_jobs; *_names: a JSON count per name), the named learned
-- method's cut minus the named free rule's per scored job (0 where none is named): its mean, 95%
-- interval at Holm's level over every budget of every trace, minimum detectable effect, bootstrap p
-- and Holm-adjusted p, and the verdict ('learned above', 'learned below', 'tie', 'no winner').
-- Built by asset operator_budgets from operator_capped_outcomes.
CREATE TABLE IF NOT EXISTS named_comparisons (
    trace VARCHAR NOT NULL,
    budget DOUBLE NOT NULL,
    scheme VARCHAR,
    warmup INTEGER,
    n_scored INTEGER,
    n_choosing_min INTEGER,
    n_choosing_median INTEGER,
    n_choosing_max INTEGER,
    learned VARCHAR,
    learned_mean DOUBLE,
    learned_mde DOUBLE,
    learned_words VARCHAR,
    free_rule VARCHAR,
    free_rule_mean DOUBLE,
    free_rule_mde DOUBLE,
    free_rule_words VARCHAR,
    learned_named_jobs INTEGER,
    free_rule_named_jobs INTEGER,
    learned_names VARCHAR,
    free_rule_names VARCHAR,
    learned_cut DOUBLE,
    free_rule_cut DOUBLE,
    diff DOUBLE,
    diff_lo DOUBLE,
    diff_hi DOUBLE,
    diff_mde DOUBLE,
    diff_p DOUBLE,
    diff_p_holm DOUBLE,
    verdict VARCHAR
);
