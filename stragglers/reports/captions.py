"""The comparison report's headings and captions, one (heading, caption) pair per section
whose words do not depend on the run (stragglers.reports.views.captions has those that do)."""

EARLINESS_CAPTION = (
    "Accuracy, earliness and completion time",
    "f1_auc: F1 averaged over normalized time k/10, k = 1..10 (a flag raised at t1 counts ten times, one "
    "raised just before tau once). median lead: the median over true positives of (latency - flag time) / "
    "tau. Jobs' completion time: what relaunching the flagged tasks does to it, in words (shortens or "
    "lengthens, by the mean share over jobs; Algorithm 2: unlimited machines; Algorithm 3: averaged over "
    "machine counts). docs/EVALUATION.md.")
ACCURACY_VS_EARLINESS_CAPTION = (
    "Accuracy against earliness, one point per method",
    "x: final F1; y: f1_auc (F1 averaged over normalized time). On the diagonal a method is as accurate "
    "early as at the end; below it, its flags come late. Methods at the same point share one label.")
ABLATION_CAPTION = (
    "Where the paper's numbers come from: the protocol ablation",
    "NURD, NURD-NC, GBTR, the best baseline and the reference rules under the authors' protocol (their "
    "released code), with each of its settings switched back to this pipeline's protocol one at a time, and "
    "under this pipeline's protocol. Means over jobs; column settings records every setting of the row "
    "(docs/EVALUATION.md).")
SENSITIVITY_CAPTION = (
    "NURD's sensitivity to alpha and the straggler quantile",
    "NURD's F1 and f1_auc for alpha in {0, 0.25, 0.5} and quantile in {0.7, 0.8, 0.9, 0.95} (the paper "
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
    "headroom). Pareto: no other row shortens jobs as much for as little; beats free rules: no free rule "
    "shortens jobs as much for as little extra machine time (docs/EVALUATION.md).")
OPERATOR_PARETO_CAPTION = (
    "Operator's view: how much jobs are shortened against the extra machine time",
    "One point per method (unlimited machines, mean over jobs and seeds); open squares: free rules; star: "
    "the oracle; dashed: the Pareto front; thin lines: each survival method's outcome as the price of machine "
    "time (lambda) goes from 0 to 8, its threshold chosen on earlier jobs. Up and left is better.")


TRACES_CAPTION = (
    "Traces",
    "Every trace of this report, each its own rows in every table below: whether its events are real or "
    "generated, the jobs and methods evaluated, and the features the methods saw (NURD_FEATURE_SET; "
    "docs/EVENT_FEATURES.md). The paper's numbers were measured with usage features: beside a trace whose "
    "methods saw event features they compare the task, not the inputs.")


SURVIVAL_VERDICT_CAPTION = (
    "The survival family against each free rule (operator's protocol)",
    "Per survival method and free rule: the method minus the rule in the jobs' completion time reduction and "
    "in extra machine time (percentage points of the job's own, speculative copies, unlimited machines, mean "
    "over 10 relaunch seeds) and in F1 AUC, mean over the jobs both were scored on, with 95% paired bootstrap "
    "intervals over jobs (docs/EVALUATION.md, 'The survival family').")
COST_CURVE_CAPTION = (
    "The survival family's cost-aware threshold over the price of machine time",
    "Per lambda: each job's threshold is the one that maximized, over the jobs that ended before its first "
    "checkpoint, the JCT reduction minus lambda x the extra machine time; the row's outcome is over all jobs "
    "(jobs with too few earlier jobs use the fallback threshold). 'configured' marks NURD_COST_LAMBDA.")


SPARK_ANSWER_CAPTION = (
    "Spark event logs: the setting you run, Spark 4.0's defaults and the answer, side by side",
    "Spark's own rule replayed on the logs by the engine (its check every spark.speculation.interval, a copy on a "
    "free executor core of another host once no task is left to launch, no cap: Spark holds no budget). On the "
    "scored stages (each with the setting chosen within the budget on the stages that ended before it started, "
    "written only where its mean cut there exceeds the smallest effect those stages can tell from none; elsewhere "
    "the stage keeps what it ran): the change in stage time (negative: shorter) with its 95% bootstrap interval "
    "over stages, the extra executor time (share of the stages' own) and the copies per stage.")

ANSWER_CAPTION = (
    "The answer: what 2% extra machine time buys (operator's protocol)",
    "Per trace, on the scored jobs (a job is scored once 10 jobs ended before it started): Spark's speculation with "
    "its settings (quantile, multiplier, minTaskRuntime) chosen for each job on the jobs that ended before it, the "
    "budget enforced at every check, and as Spark runs it (no cap); the learned method and the free rule named on "
    "the jobs that ended before each scored job (or no winner); the best policy tuned on earlier jobs; the headroom "
    "(per job the best of the oracle and of every point of every policy, same cap, same checks). Brackets: 95% "
    "bootstrap intervals over the scored jobs. Every budget and every method: the next tables, and "
    "docs/EVALUATION.md 'Cost curves'.")

NAMED_COMPARISONS_CAPTION = (
    "The comparison named before it is scored, at every budget (operator's protocol)",
    "Per trace and budget: the learned method and the free rule named on the jobs that ended before each scored job "
    "started (only where its mean cut there exceeds its minimum detectable effect: two-sided 5%, 80% power; else no "
    "winner, and no copy), how often each was named, their cuts on the scored jobs, the named learned method minus "
    "the named free rule per scored job (mean, 95% interval at Holm's level over every budget of every trace, the "
    "smallest effect the scored jobs could have detected, Holm-adjusted p) and the verdict.")

MATCHED_BUDGETS_CAPTION = (
    "Every method at every budget of extra machine time (operator's protocol; exploration)",
    "Per budget (0.5, 1, 2, 5% extra machine time, a share of the jobs' own): each method's flag cut (Spark's "
    "rule: quantile x multiplier x minTaskRuntime; the KM rule: q; wait-for-tau: its margin; a model: the cut on "
    "its score) chosen for each job on the jobs that ended before that job's first checkpoint (the largest mean "
    "shortening of the jobs' completion time (JCT) within the budget there; no copy while fewer than "
    "NURD_HISTORY_MIN_JOBS jobs have ended or when nothing fits), then scored on that job. Rows: the scored jobs, "
    "the half of the trace's jobs that ended last. Pre-named: the learned method and the free rule with the "
    "largest tuned mean on the half that ended first (column 'chosen on'), named before the scored jobs were "
    "read; their paired comparison is the report's first paragraph. JCT: mean over jobs and 10 relaunch seeds, "
    "speculative copies, unlimited machines, with a 95% bootstrap interval over jobs; extra machine: what that "
    "choice cost on these jobs (it can exceed the budget: it was chosen on earlier ones). Every other row is "
    "exploration: vs pre-named free rule and vs tuned Spark, the method minus that rule per job, with paired "
    "bootstrap intervals Holm-adjusted over the methods at that budget and trace; verdict: above or below when "
    "the adjusted interval excludes 0, else a tie. The curve's best within budget is chosen on the same jobs "
    "(an upper bound, not a result); area to 5%: the mean over budgets 0-5% of the curve's best cut "
    "(docs/EVALUATION.md, 'Cost curves').")
BUDGET_CURVES_CAPTION = (
    "Figure 0. The jobs' completion-time cut against the extra machine time, every method",
    "Each line: the best shortening of the jobs' completion time (JCT) a method's sweep reaches within a budget (its upper envelope over its flag "
    "cuts, mean over jobs, chosen on the same jobs); dashed: the free rules' sweeps; bold black: Spark's rule "
    "tuned on earlier jobs at each budget (an honest outcome, below its dashed in-sample envelope); star: the "
    "oracle. Vertical lines: the budgets of the table above. Up and left is better.")
SWEEP_CURVE_CAPTION = (
    "Every point of every sweep",
    "Per method and flag cut ('default': the method's own rule; Spark: q<quantile>-m<multiplier>-min<s>): the "
    "mean over jobs of the shortening of the jobs' completion time (JCT) and of the extra machine time (percent), speculative copies, unlimited "
    "machines, 10 relaunch seeds.")
