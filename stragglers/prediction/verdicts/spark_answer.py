"""The operator's answer on Spark: which ``spark.speculation.*`` setting to write, what it buys, what it
costs, or "keep your setting" when nothing gains; from the engine's outcomes of Spark's rule.

Spark cannot hold a budget: the setting an operator writes runs uncapped. So the answer at a budget
b replays Spark's rule as Spark runs it (the engine's cap ``none``, copies on the application's free
cores of other hosts) for every setting of the grid (``spark_rule.GRID``), and for the setting each
application ran with (point ``current``: from its Spark properties; none where speculation was off).

- **The procedure, scored** (``as_run``): each scored stage's setting is the one with the largest
  mean stage-time cut among the settings whose mean extra executor time was within b on its choosing
  stages (the stages that ended before it started: ``verdict.rolling_split``), written only where that
  mean cut exceeds its minimum detectable effect there; elsewhere the stage keeps the setting it ran
  with. Its outcome on the scored stages is what following the answer would have bought.
- **The setting to write now**: the same choice on every stage, with its mean cut and minimum
  detectable effect: written only where it is named and differs
  from what the applications run; otherwise "keep your setting" (or "leave speculation off"), with
  the numbers that say why.
- **Side by side on the scored stages**: the setting the applications run, Spark 4.0's defaults and
  the procedure: stage-time cut with its 95% interval, extra executor time, copies, stages.

The same function makes table ``spark_answer`` (asset operator_budgets), the report's Spark row
(``budgets.SPARK_AS_RUN``) and the console command's answer (``nurd-spark advise``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import duckdb
import numpy as np
import pandas as pd

from stragglers.prediction.replay.earlier import job_times
from stragglers.prediction.engine.jobs import application_rules
from stragglers.prediction.engine.spark_rule import SPARK_4_DEFAULTS, SpeculationRule
from stragglers.prediction.engine.policies import CURRENT, DEFAULT_POINT
from stragglers.prediction.verdicts.tuning import NO_COPY, TUNED_RULE, envelope, paired_interval
from stragglers.prediction.verdicts.verdict import Split, mde, rolling_split
from stragglers.warehouse.sql_files import render


@dataclass(frozen=True)
class Choice:
    """The setting chosen on some stages (``point``: None, no setting within the budget gains) and
    whether it is named: its mean cut there above its minimum detectable effect."""
    point: str | None
    mean: float
    mde: float
    spend: float
    n: int

    @property
    def named(self) -> bool:
        return self.point is not None and np.isfinite(self.mde) and self.mean > self.mde


def _wide(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    return rows.pivot_table(index="job_id", columns="point", values=column, aggfunc="first")


def choose(cut: pd.DataFrame, spend: pd.DataFrame, jobs: Sequence[int], budget: float) -> Choice:
    """The grid setting with the largest mean cut among those whose mean spend on ``jobs`` is within
    ``budget`` (``sweep.envelope``; ties to the cheaper), with that mean's MDE."""
    # the grid's settings: 'default' (Spark 3.x's, the method's own point) is on it, and the answer names a grid point
    grid = [p for p in cut.columns if p not in (CURRENT, DEFAULT_POINT)]
    rows = [j for j in jobs if j in cut.index]
    if not rows or not grid:
        return Choice(None, math.nan, math.nan, math.nan, len(rows))
    c, e = cut.loc[rows, grid].fillna(0.0), spend.loc[rows, grid].fillna(0.0)
    best, i = envelope(e.mean().to_numpy(), c.mean().to_numpy(), budget)
    if i is None:
        return Choice(None, 0.0, math.nan, 0.0, len(rows))
    p = grid[i]
    return Choice(p, best, mde(c[p].to_numpy()), float(e[p].mean()), len(rows))


def as_run(rows: pd.DataFrame, split: Split, budget: float) -> tuple[pd.DataFrame, Choice]:
    """(per scored job: the point applied (``CURRENT`` where kept), its cut, extra and copies, whether
    it changed the setting; the choice on every job, what to write now) from Spark's rule's uncapped rows
    (``rows``: job_id, point, jct_reduction, extra_machine_share, n_copies) (module doc)."""
    cut, spend, copies = _wide(rows, "jct_reduction"), _wide(rows, "extra_machine_share"), _wide(rows, "n_copies")
    for w in (cut, spend, copies):
        if CURRENT not in w.columns:
            w[CURRENT] = 0.0             # speculation off where the applications did not run it
    out = []
    for j, jobs in split.choosing.items():
        if j not in cut.index:
            continue
        ch = choose(cut, spend, jobs, budget)
        p = ch.point if ch.named else CURRENT
        out.append((j, p, float(np.nan_to_num(cut.at[j, p])), float(np.nan_to_num(spend.at[j, p])),
                    float(np.nan_to_num(copies.at[j, p])), p != CURRENT))
    now = choose(cut, spend, cut.index.tolist(), budget)     # every job: what to write going forward
    return pd.DataFrame(out, columns=["job_id", "point", "jct_reduction", "extra_machine_share", "n_copies",
                                      "changed"]), now


@dataclass(frozen=True)
class Row:
    """One setting on the scored stages."""
    who: str
    setting: str
    cut: float
    cut_lo: float
    cut_hi: float
    extra: float
    copies: float
    stages: int


def _row(who: str, setting: str, t: pd.DataFrame, n_boot: int, seed: int) -> Row:
    lo, hi = paired_interval(t["jct_reduction"].to_numpy(), n_boot, seed) if len(t) else (math.nan, math.nan)
    return Row(who, setting, float(t["jct_reduction"].mean()) if len(t) else math.nan, lo, hi,
               float(t["extra_machine_share"].mean()) if len(t) else math.nan,
               float(t["n_copies"].mean()) if len(t) else math.nan, len(t))


def current_words(rules: Mapping[int, SpeculationRule | None]) -> str:
    """What the applications run, in words (one setting, off, or several)."""
    distinct = set(rules.values())
    if not distinct or distinct == {None}:
        return "speculation off (Spark's default)"
    if len(distinct) == 1:
        (rule,) = distinct
        return f"speculation on with {rule.words()}"
    return f"{len(distinct)} settings across the applications (each stage replayed with its own)"


@dataclass
class SparkAnswer:
    """The answer at one budget on one trace (module doc)."""
    trace: str
    budget: float
    stages: int
    applications: int
    split: Split
    now: Choice
    current: str                 # current_words
    current_rule: SpeculationRule | None
    rows: list[Row] = field(default_factory=list)
    copied_by_spark: int = 0     # tasks of these stages that ran a copy Spark made (speculation was on)
    choosing_sizes: tuple[int, int] = (0, 0)   # fewest and most evaluated stages a scored stage's choice read

    @property
    def recommended(self) -> SpeculationRule | None:
        """The setting to write, or None: keep what runs."""
        if not self.now.named:
            return None
        rule = SpeculationRule.from_point(self.now.point)
        return None if rule == self.current_rule else rule

    def verdict(self) -> str:
        """One sentence: write this, or keep, and why (with the numbers)."""
        pct = 100 * self.budget
        keep = ("leave speculation off" if self.current_rule is None and self.current.startswith("speculation off")
                else "keep your setting")
        if self.now.point is None:
            return (f"{keep.capitalize()}: no setting of Spark's speculation shortens your {self.now.n} stages within "
                    f"{pct:g}% extra executor time.")
        rule = SpeculationRule.from_point(self.now.point)
        evidence = (f"shortened your {self.now.n} stages by {100 * self.now.mean:.2f}% on average for "
                    f"{100 * self.now.spend:.2f}% extra executor time")
        if not self.now.named:
            return (f"{keep.capitalize()}: the best setting within {pct:g}% extra executor time ({rule.words()}) "
                    f"{evidence}, not above the smallest effect your stages can tell from none "
                    f"({100 * self.now.mde:.2f}%, 80% power).")
        if self.recommended is None:
            return f"Keep your setting: it is the best within {pct:g}% extra executor time; it {evidence}."
        return (f"Set {rule.words()}: it {evidence} (the smallest effect your stages can tell from none: "
                f"{100 * self.now.mde:.2f}%).")

    def conf(self) -> str:
        """The spark-defaults.conf block: the setting to write, or a comment saying to keep it."""
        rule = self.recommended
        if rule is None:
            head = "# nothing to change: " + self.verdict().split(":")[0].lower()
            # speculation off written only where every application ran it off (not where they ran several settings)
            off = self.current_rule is None and self.current.startswith("speculation off")
            return head + ("\nspark.speculation                          false\n" if off else "\n")
        return "# chosen by replaying your event logs (nurd-spark advise)\n" + rule.conf() + "\n"

    def lines(self) -> list[str]:
        """The answer in a few lines, for a terminal."""
        head = [self.verdict(),
                f"You run: {self.current}. Budget: {100 * self.budget:g}% extra executor time. {self.stages} stages "
                f"from {self.applications} applications."]
        if self.copied_by_spark:
            head.append(f"{self.copied_by_spark} of your tasks ran a copy Spark made: the replay sees them as they "
                        f"ended with it, so what your setting already buys is in every number here; to compare "
                        f"settings from scratch, log some applications with speculation off.")
        scored = self.rows[-1].stages if self.rows else 0    # the scored stages the replay evaluated
        if not scored:
            return head + [f"Too few stages to score a setting out of sample: a stage is scored once "
                           f"{self.split.warmup} stages ended before it started."]
        lo, hi = self.choosing_sizes
        table = [("", "setting", "stage time [95% CI]", "executor time", "copies per stage")]
        for r in self.rows:
            table.append((r.who, r.setting, f"{change(r.cut)} [{change(r.cut_hi)}, {change(r.cut_lo)}]",
                          f"+{100 * r.extra:.2f}%", f"{r.copies:.1f}"))
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        return head + [f"On the {scored} later stages, each with the setting chosen on the {lo} to "
                       f"{hi} stages that ended before it started (stage time: the change, negative is shorter):",
                       *["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]]


def change(cut: float) -> str:
    """A stage-time cut (a share) as the change in stage time: '-1.20%' is 1.2% shorter; '0.00%'."""
    if cut is None or not np.isfinite(cut):
        return "n/a"
    v = -100 * cut
    return "0.00%" if abs(v) < 0.005 else f"{v:+.2f}%"


def spark_answer(rows: pd.DataFrame, split: Split, budget: float, trace: str,
                 rules: Mapping[int, SpeculationRule | None], applications: int,
                 n_boot: int = 1000, seed: int = 0, copied_by_spark: int = 0) -> SparkAnswer:
    """The answer from Spark's rule's uncapped rows of one trace (module doc); ``rules``: per job the
    setting its application ran with."""
    procedure, now = as_run(rows, split, budget)
    scored = procedure["job_id"].tolist()
    wide = {c: _wide(rows, c) for c in ("jct_reduction", "extra_machine_share", "n_copies")}

    def fixed(point: str) -> pd.DataFrame:
        if point not in wide["jct_reduction"].columns:
            return pd.DataFrame({"job_id": scored, "jct_reduction": 0.0, "extra_machine_share": 0.0, "n_copies": 0.0})
        return pd.DataFrame({"job_id": scored, **{c: wide[c][point].reindex(scored).fillna(0.0).to_numpy()
                                                  for c in wide}})

    distinct = set(rules.values())
    current_rule = next(iter(distinct)) if len(distinct) == 1 else None
    current = current_words(rules)
    evaluated = set(int(j) for j in rows["job_id"])
    lo, _, hi = split.sizes(among=evaluated)
    answer = SparkAnswer(trace, budget, len(evaluated), applications, split, now, current, current_rule,
                         copied_by_spark=copied_by_spark, choosing_sizes=(lo, hi))
    answer.rows = [
        _row("what you run", current if len(current) < 46 else "your settings", fixed(CURRENT), n_boot, seed),
        _row("Spark 4.0's defaults", SPARK_4_DEFAULTS.words(), fixed(SPARK_4_DEFAULTS.point), n_boot, seed),
        _row("following this answer", "chosen before each stage (or kept)", procedure, n_boot, seed),
    ]
    return answer


def rule_rows(capped: pd.DataFrame, trace: str) -> pd.DataFrame:
    """Spark's rule's uncapped rows of ``trace`` from the engine's outcomes (table capped_outcomes)."""
    c = capped[(capped["trace"] == trace) & (capped["method"] == TUNED_RULE) & (capped["cap"] == "none")]
    return c[["job_id", "point", "jct_reduction", "extra_machine_share", "n_copies"]]


ANSWER_COLUMNS = ["trace", "budget", "stages", "applications", "scored", "current", "chosen", "chosen_mean",
                  "chosen_mde", "chosen_spend", "chosen_stages", "recommended", "verdict", "conf"]
ROW_COLUMNS = ["trace", "budget", "who", "setting", "cut", "cut_lo", "cut_hi", "extra", "copies", "stages"]


def answer_table(a: SparkAnswer) -> tuple[dict, list[dict]]:
    """The answer as table spark_answer's row and spark_answer_rows' rows."""
    rec = a.recommended
    head = {"trace": a.trace, "budget": a.budget, "stages": a.stages, "applications": a.applications,
            "scored": len(a.split.scored), "current": a.current, "chosen": a.now.point or NO_COPY,
            "chosen_mean": a.now.mean, "chosen_mde": a.now.mde, "chosen_spend": a.now.spend,
            "chosen_stages": a.now.n, "recommended": rec.point if rec else None, "verdict": a.verdict(),
            "conf": a.conf()}
    return head, [{"trace": a.trace, "budget": a.budget, **r.__dict__} for r in a.rows]


def spark_answers(con: duckdb.DuckDBPyConnection, trace: str, rows: pd.DataFrame, budgets: Sequence[float],
                  n_boot: int = 1000, seed: int = 0) -> list[SparkAnswer]:
    """The answer at each of ``budgets`` on Spark trace ``trace`` from Spark's rule's uncapped outcomes
    ``rows`` (``rule_rows`` of table capped_outcomes, or the console command's), on the stages those
    rows hold."""
    times = job_times(con, trace, "operator_tasks")
    split = rolling_split(times)
    keys = con.execute(render("spark_stage_keys", trace=trace)).df()
    keys = keys[keys["job_id"].isin(set(rows["job_id"]))]
    by_log = application_rules(con)
    rules = {int(j): by_log.get(int(log)) for j, log in zip(keys["job_id"], keys["log_id"])}
    copied = int(con.execute(render("spark_copied_tasks", trace=trace), [keys["job_id"].tolist()]).fetchone()[0])
    return [spark_answer(rows, split, b, trace, rules, int(keys["app_id"].nunique()), n_boot, seed, copied)
            for b in budgets]
