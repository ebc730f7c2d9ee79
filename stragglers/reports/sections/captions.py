"""The comparison report's headings and captions, one (heading, caption) pair per section
whose words do not depend on the run (stragglers.reports.page.views.captions has those that do). The
report numbers tables and figures as it shows them; a caption refers to another as {table:name}
or {fig:name} (stragglers.reports.page.publish)."""

from stragglers.prediction.verdicts.tuning import BUDGETS, HEADLINE_BUDGET

_AT = f"{HEADLINE_BUDGET * 100:g}%"
_OTHERS = ", ".join(f"{b * 100:g}%" for b in BUDGETS if b != HEADLINE_BUDGET)

EARLINESS_CAPTION = (
    "Accuracy, earliness and completion time",
    "F1 AUC: F1 averaged over normalized time k/10, k = 1..10 (a flag raised at t1 counts ten times, one "
    "raised just before tau once). median lead: the median over true positives of (latency - flag time) / "
    "tau. Jobs' completion time: what relaunching the flagged tasks does to it, in words (shortens or "
    "lengthens, by the mean share over jobs; Algorithm 2: unlimited machines; Algorithm 3: averaged over "
    "machine counts).")
ACCURACY_VS_EARLINESS_CAPTION = (
    "Accuracy against earliness, one point per method",
    "x: final F1; y: F1 AUC (F1 averaged over normalized time). On the diagonal a method is as accurate "
    "early as at the end; below it, its flags come late. Methods at the same point share one label.")
ABLATION_CAPTION = (
    "Where the paper's numbers come from: the protocol ablation",
    "NURD, NURD-NC, GBTR, the best baseline and the reference rules under the authors' protocol (their "
    "released code), with each of its settings switched back to this pipeline's protocol one at a time, and "
    "under this pipeline's protocol. Means over jobs; the CSV's column settings records every setting of the "
    "row.")
SENSITIVITY_CAPTION = (
    "NURD's sensitivity to alpha and the straggler quantile",
    "NURD's F1 and F1 AUC for alpha in {0, 0.25, 0.5} and quantile in {0.7, 0.8, 0.9, 0.95} (the paper "
    "claims robustness over p70-p95), beside the reference rules at the same quantile (no alpha). Means over jobs.")


OPERATOR_CAPTION = (
    "The operator's view (speculative copies, threshold estimated online, checkpoints until the job ends)",
    "What a production scheduler would see. The replay holds every task of the job, on the job's wall "
    "clock: the tasks running at a decision are its candidates, whatever they will do later; a copy of a "
    "task that will be killed, evicted, failed or lost never finishes, costs machine time until its "
    "original ends and buys nothing, and a flag on it is a false positive; a job completes when its last "
    "finishing task finishes. Each method is given tau_hat(t), the job's p90 latency as "
    "estimated at checkpoint t (Kaplan-Meier over the finished tasks and the running ones censored), not the "
    "true p90; checkpoints go on until the job's last task ends (a straggler flagged before it ends is a "
    "true positive); a flag launches a copy of the task on another machine, the first attempt to finish "
    "wins and the other is killed (Spark, Hadoop, LATE, Mantri, Dolly). Jobs' completion time: what the "
    "copies do to it, in words (shortens or lengthens by the mean share over jobs and 10 seeds), with "
    "unlimited machines and averaged over 100-900 machines; p90 over jobs: the job at the 90th percentile "
    "of (new - original) / original (the tail; a copy never delays, so it never lengthens); extra machine time: the time both attempts ran, as a share of the job's original machine "
    "time. Free rules: no model; the oracle copies every true straggler at the first checkpoint (the "
    "headroom).")
OPERATOR_PARETO_CAPTION = (
    "Each method at its own default: how much jobs are shortened against the extra machine time",
    "One point per method (unlimited machines, mean over jobs and seeds); open squares: free rules; star: "
    "the oracle; filled markers: learned methods; dashed: the Pareto front. Up and left is better.")


TRACES_CAPTION = (
    "Traces",
    "Every trace of this report, each its own rows in every table: whether its events are real or generated, "
    "the protocols it was evaluated under, the jobs (Spark: stages) and methods evaluated (the most under "
    "either protocol), and the features the "
    "methods saw (usage: the tasks' resource samples, as in the paper; events: what the scheduler's event log "
    "holds). The paper's numbers were measured with usage features: beside a trace whose methods saw event "
    "features they compare the task, not the inputs.")


SURVIVAL_VERDICT_CAPTION = (
    "The survival family against each free rule (operator's protocol)",
    "Per survival method and free rule: the method minus the rule in the jobs' completion time reduction and "
    "in extra machine time (percentage points of the job's own, speculative copies, unlimited machines, mean "
    "over 10 relaunch seeds) and in F1 AUC, mean over the jobs both were scored on, with 95% paired bootstrap "
    "intervals over jobs.")
COST_CURVE_CAPTION = (
    "The survival family's cost-aware threshold over the price of machine time",
    "Per lambda: each job's threshold is the one that maximized, over the jobs that ended before its first "
    "checkpoint, the JCT reduction minus lambda x the extra machine time; the row's outcome is over all jobs "
    "(jobs with too few earlier jobs use the fallback threshold). 'configured' marks the price this run "
    "used.")


SPARK_ANSWER_CAPTION = (
    "Spark event logs: the setting you run, Spark 4.0's defaults and the answer, side by side",
    "Spark's own rule replayed on the logs by the engine (its check every spark.speculation.interval, a copy on a "
    "free executor core of another host once no task is left to launch, no cap: Spark holds no budget). On the "
    "scored stages (each with the setting chosen within the budget on the stages that ended before it started, "
    "written only where its mean cut there exceeds the smallest effect those stages can tell from none; elsewhere "
    "the stage keeps what it ran): the change in stage time (negative: shorter) with its 95% bootstrap interval "
    "over stages, the extra executor time (share of the stages' own) and the copies per stage.")

NAMED_COMPARISONS_CAPTION = (
    "The comparison named before it is scored, at every budget (operator's protocol)",
    "Per trace and budget: the learned method and the free rule named on the jobs that ended before each scored job "
    "started (only where its mean cut there exceeds its minimum detectable effect: two-sided 5%, 80% power; else no "
    "winner, and no copy), how often each was named, their cuts on the scored jobs, the named learned method minus "
    "the named free rule per scored job (mean, 95% interval at Holm's level over every budget of every trace, the "
    "smallest effect the scored jobs could have detected, Holm-adjusted p) and the verdict.")

MATCHED_BUDGETS_CAPTION = (
    f"Every method at {_AT} extra machine time, tuned on earlier jobs",
    "Each method's setting (its cut; Spark's rule: quantile, multiplier, minTaskRuntime) is chosen for each "
    "scored job on the jobs that ended before it started: the one that shortened them most within the budget "
    "(no copy while too few jobs have ended, or where nothing fits), then measured on that job with the budget "
    "enforced at every decision. Jobs' completion time: mean over the scored jobs and 10 copy draws, "
    "speculative copies, unlimited machines, with the 95% bootstrap interval of the cut; extra machine time: "
    "what the choice spent on these jobs, and that as a share of the budget. The named free rule and tuned Spark "
    "columns: the method minus that rule per job, with paired intervals Holm-adjusted over the methods of the "
    "trace. Best setting in hindsight: the best single setting chosen on the same jobs (an upper bound, not a "
    "result). Mean best cut, budgets 0-5%: the average of the curve in {fig:budget_curves} from 0 to 5%. The "
    f"other budgets ({_OTHERS}) are rows of the CSV file.")
BUDGET_CURVES_CAPTION = (
    "The best cut in job completion time each method reaches within a budget of extra machine time",
    "Each line: the best a method's settings reach at each extra machine time (the upper envelope of its "
    "sweep, mean over jobs; chosen on the same jobs, so an upper bound). Dashed: free rules; solid: learned "
    "methods; bold black with dots: Spark's rule tuned on earlier jobs at each budget (a result, not an upper "
    "bound); gold stars: the headroom at each budget; big star: the oracle with no budget. Vertical lines: the "
    f"budgets ({', '.join(f'{b * 100:g}%' for b in BUDGETS)}). Up and left is better.")
SWEEP_CURVE_CAPTION = (
    "Every method's settings that no other of its settings beats",
    "Per method, the settings (cuts) on its upper envelope: no other setting of the same method shortens jobs "
    "as much for as little extra machine time, sorted by extra machine time. Mean over jobs, speculative copies, "
    "unlimited machines, 10 copy draws. Every setting of every method is a row of the CSV file.")
