"""The report's glossary: every term the page uses that a reader who has never seen the paper needs
defined, each with the pattern that finds its uses in the page's text.

``TERMS`` holds the words of the protocols and of the statistics; ``method_terms`` adds the method
names a run shows. report.md ends with the terms it uses (``glossary_markdown``); report.html links
each term's first use to its entry (stragglers.reports.page.html). A pattern is a regular expression both
Python and a browser read the same way (``\\b``, alternation, a negative lookahead: a positive one would
look past the link into the next text), so the browser check can find the first use on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stragglers.prediction.methods import FREE_RULES, VARIANTS, is_learned
from stragglers.reports.page.style import display_name


@dataclass(frozen=True)
class Term:
    key: str              # the entry's anchor: #g-<key>
    name: str             # as the glossary writes it
    pattern: str          # finds a use in the page's text
    definition: str
    ignore_case: bool = False

    @property
    def regex(self) -> re.Pattern:
        return re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)


TERMS: tuple[Term, ...] = (
    Term("speculation", "speculation, speculative copy",
         r"\bspeculative cop(?:y|ies)\b|\bspeculation\b",
         "When a task looks slow, the scheduler starts a second copy of it on another machine, keeps whichever "
         "attempt finishes first and kills the other. Both attempts cost machine time. Spark, Hadoop and "
         "most cluster schedulers do this.", ignore_case=True),
    Term("straggler", "straggler", r"\bstragglers?\b",
         "A task of a job that runs much longer than the job's other tasks: here, a task whose latency is at "
         "least tau. A job ends when its last task ends, so a few stragglers set its completion time.",
         ignore_case=True),
    Term("jct", "JCT, job completion time", r"\bJCT\b|\bjob completion time\b|\bjobs' completion time\b",
         "The time from a job's first task starting to its last task ending.", ignore_case=False),
    Term("extra-machine-time", "extra machine time",
         r"\bextra (?:machine|executor) time\b|\bmore machine time\b",
         "The machine time the copies ran (both attempts count until one wins), as a share of the time the "
         "jobs' own tasks ran. 2% means the cluster works 2% more.", ignore_case=True),
    Term("budget", "budget", r"\bbudgets?\b",
         "The most extra machine time the operator agrees to spend on copies, as a share of the jobs' own "
         "machine time (0.5%, 1%, 2% or 5%). Enforced: no copy starts once the job has spent it.",
         ignore_case=True),
    Term("free-rule", "free rule", r"\bfree rules?\b",
         "A rule that needs no model and no training: Spark's speculation rule, flag all at t1, wait for "
         "tau and the KM survival rule. What a scheduler gets for free.", ignore_case=True),
    Term("learned-method", "learned method", r"\blearned methods?\b",
         "A method that trains a model on the job's finished tasks (NURD, GBTR and the paper's other rivals), "
         "as opposed to a free rule.", ignore_case=True),
    Term("baseline", "baseline", r"\bbaselines?\b",
         "One of the paper's rival methods (outlier detectors, PU learning, censored regression, Wrangler): "
         "neither NURD's family nor a free rule.", ignore_case=True),
    Term("reference-rules", "reference rules", r"\breference rules?\b",
         "The free rules and the oracle together: the yardsticks drawn beside every method.", ignore_case=True),
    Term("oracle", "oracle", r"\boracle\b",
         "A rule that knows which tasks will be stragglers (it reads the answers) and copies exactly those at "
         "the first decision. No scheduler can run it; it shows the most copies could buy.", ignore_case=True),
    Term("headroom", "headroom", r"\bheadroom\b",
         "The most any policy could buy at a budget: per job the best of the oracle and of every setting of "
         "every method under the same budget, averaged over jobs.", ignore_case=True),
    Term("scored-jobs", "scored jobs, earlier jobs", r"\bscored jobs?\b|\bearlier jobs\b|\blater jobs\b",
         "A setting is chosen for a job using only the jobs that ended before it started (the earlier jobs), "
         "then measured on that job. A job is scored once enough jobs ended before it (10); the first jobs "
         "only teach.", ignore_case=True),
    Term("interval", "95% interval", r"\b95% (?:CI|(?:bootstrap |paired |percentile )?intervals?)\b|\[95% CI\]",
         "The range the mean would cover in 95 of 100 repetitions: jobs are drawn again with replacement (a "
         "bootstrap) and the mean is recomputed each time. An interval that reaches 0 does not rule out "
         "no effect.", ignore_case=True),
    Term("mde", "minimum detectable effect",
         r"\bminimum detectable effects?\b|\bsmallest effect\b|\bdetectable\b",
         "The smallest average gain the jobs at hand would show as different from none, 4 times in 5 (80% "
         "power, 5% two-sided). A smaller gain may be real, but these jobs cannot tell it from chance.",
         ignore_case=True),
    Term("named", "named in advance (pre-named)", r"\bpre-named\b|\bnamed (?:before|in advance|on earlier)\b",
         "For each scored job, the learned method and the free rule to compare are picked on the earlier jobs "
         "only, and only where their gain there beats the minimum detectable effect; otherwise: no winner. "
         "The comparison is fixed before the job is looked at.", ignore_case=True),
    Term("no-winner", "no winner", r"\bno winner\b",
         "No candidate gained more on the earlier jobs than those jobs can tell from chance: nothing is named "
         "and no copy is made.", ignore_case=True),
    Term("holm", "Holm", r"\bHolm\b",
         "Holm's correction: when many comparisons are made at once, each interval and p-value is widened so "
         "that the chance of any false finding stays at 5%."),
    Term("pp", "pp (percentage points)", r"\bpp\b",
         "The difference of two percentages: 3% minus 1% is 2 pp."),
    Term("cut", "cut", r"\bcuts?\b",
         "Two uses. A method's cut is its setting: the threshold its score must pass before a task gets a "
         "copy (each method is tried at many cuts). A cut in job completion time is how much shorter the jobs "
         "got, in %.", ignore_case=True),
    Term("tau", "tau", r"\btau\b",
         "The straggler threshold of a job: the 90th percentile of its tasks' latencies (p90), known only once "
         "the job is over."),
    Term("tau-hat", "tau_hat", r"\btau_hat\b",
         "tau as a scheduler can estimate it while the job runs, from the finished tasks and the elapsed time "
         "of the running ones (Kaplan-Meier)."),
    Term("p90", "p90", r"\bp90\b", "The 90th percentile: 90% of the values are below it."),
    Term("t0", "t0, t1", r"\bt0\b|\bt1\b",
         "The paper's checkpoints: t0 is when 4% of a job's tasks have finished, t1 the first checkpoint after "
         "it; the paper decides at ten checkpoints from t0 to tau."),
    Term("operator-protocol", "operator's protocol", r"\boperator's (?:protocol|view)\b",
         "How a scheduler would run a method: tau estimated while the job runs (tau_hat), decisions until the "
         "job ends, and a flagged task gets a speculative copy (nothing is killed, so a job is never made "
         "longer).", ignore_case=True),
    Term("paper-protocol", "paper's protocol", r"\bpaper's protocol\b",
         "How the paper scores a method: the true tau is given, decisions stop at tau, and a flagged task is "
         "killed and restarted (its work is lost, and the restart can be slow again, so a job can get longer).",
         ignore_case=True),
    Term("f1", "F1", r"\bF1\b(?! AUC)",
         "How well the flagged tasks match the true stragglers, from 0 to 1: the harmonic mean of the share of "
         "stragglers flagged (TPR) and the share of flags that were stragglers."),
    Term("f1-auc", "F1 AUC", r"\bF1 AUC\b",
         "F1 averaged over the ten checkpoints from t0 to tau: 1 when every straggler is flagged at the first "
         "one. It rewards flagging early, which is what shortens a job."),
    Term("rates", "TPR, FPR, FNR", r"\b(?:TPR|FPR|FNR)\b",
         "True-positive rate (the share of stragglers flagged), false-positive rate (the share of other tasks "
         "flagged) and false-negative rate (the share of stragglers missed)."),
    Term("median-lead", "median lead", r"\bmedian lead\b",
         "How early the true stragglers were flagged: the median of (latency - flag time) / tau. 0.9: flagged "
         "with 90% of tau still to run.", ignore_case=True),
    Term("pareto", "Pareto front", r"\bPareto\b",
         "The methods no other method beats on both counts: none shortens jobs as much for as little extra "
         "machine time."),
    Term("spark-settings", "quantile, multiplier, minTaskRuntime",
         r"\bquantile \d+(?:\.\d+)?|\bmultiplier\b|\bminTaskRuntime\b",
         "Spark's speculation settings (spark.speculation.*): once this share (quantile) of a stage's tasks "
         "has finished, copy a task that has run longer than multiplier x the median finished task and at "
         "least minTaskRuntime."),
    Term("as-spark-runs-it", "as Spark runs it", r"\bas Spark runs it\b",
         "The setting written once in spark-defaults.conf and run with no budget (Spark cannot hold one), "
         "changed only where the earlier jobs named a better one."),
    Term("algorithms", "Algorithm 2, Algorithm 3", r"\bAlgorithms? [23]\b|\bAlg\. [23]\b",
         "The paper's simulations of relaunching the flagged tasks: with as many machines as needed "
         "(Algorithm 2) and with a fixed number of machines (Algorithm 3)."),
    Term("lambda", "lambda", r"\blambda\b",
         "The price of machine time in the survival methods' choice of threshold: the JCT cut minus lambda x "
         "the extra machine time is maximized on earlier jobs."),
)

#: What each method does, in a line (the methods of the main job first; the paper's other rivals by family).
METHOD_WORDS = {
    "nurd": "the paper's method (Ding et al., MLSys 2022): a gradient-boosted regressor of a task's latency "
            "trained on the finished tasks, its predictions reweighted by how unlike the finished tasks a "
            "running task is; a task is flagged when its corrected prediction reaches tau.",
    "nurd_nc": "NURD without the calibration step (the paper's ablation).",
    "gbtr": "the same regressor as NURD without the reweighting (the paper's GBTR).",
    "flag_all": "copy every task still running at the first decision (t1): the most copies, as early as "
                "possible.",
    "wait_for_tau": "copy every task still running just before it reaches tau (tau_hat while the job runs).",
    "spark_speculation": "Spark's own rule with the defaults of Spark 3 (quantile 0.75, multiplier 1.5), or "
                         "the setting tuned on earlier jobs.",
    "spark4_speculation": "Spark's own rule with the defaults of Spark 4 (quantile 0.9, multiplier 3).",
    "km_survival": "copy a task when, from the job's finished tasks (a Kaplan-Meier curve), it is more likely "
                   "than not to run past tau.",
    "oracle": "see oracle.",
}
FAMILY_WORDS = {
    "outliers": "an outlier detector (PyOD) over the tasks' features, one of the paper's rivals.",
    "pu": "a positive-unlabeled classifier (finished tasks against running ones), one of the paper's rivals.",
    "survival": "a latency model that uses the running tasks as censored data.",
    "wrangler": "Wrangler: a linear SVM on resource usage (reads the labels of earlier tasks).",
}


def method_terms(methods) -> tuple[Term, ...]:
    """One entry per method shown (its display name, what it does, learned or free rule)."""
    out = []
    for m in sorted(set(methods) - {"oracle"}, key=display_name):
        name = display_name(m)
        cls = VARIANTS.get(m)
        words = METHOD_WORDS.get(m) or (FAMILY_WORDS.get(cls.family, "") if cls is not None else "")
        kind = " A learned method." if is_learned(m) else " A free rule." if m in FREE_RULES else ""
        edge = r"\b" if name[-1:].isalnum() else ""
        # NURD is not the start of NURD-NC
        pattern = r"\b" + re.escape(name).replace(r"\ ", " ") + edge + ("(?!-)" if name[-1:].isalnum() else "")
        out.append(Term(f"m-{m.replace('_', '-')}", name, pattern, (words[:1].upper() + words[1:] + kind).strip()))
    return tuple(out)


_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def used_terms(markdown: str, terms) -> list[Term]:
    """The terms whose pattern matches the Markdown's text (code left out), in glossary order."""
    text = _CODE.sub("", markdown)
    return [t for t in terms if t.regex.search(text)]


def glossary_markdown(terms) -> str:
    """The glossary as a Markdown list: one item per term, its name in bold."""
    return "\n".join(f"- **{t.name}**: {t.definition}" for t in terms)
