"""The README says what the scripts do and what docs/TIMINGS.md measured: command 1's block runs the
assets scripts/main_job.sh runs, with every reference rule of the method registry; the times it
quotes are TIMINGS.md's; the settings table is one table listing every NURD_* variable."""

from __future__ import annotations

import re
from pathlib import Path

from stragglers.prediction.methods import REFERENCE_RULES
from stragglers.settings import Settings, describe

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _section(title: str) -> str:
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 4)
    return README[start:end if end > 0 else None]


def _command1_block() -> str:
    """The shell block after 'Command 1 is `scripts/setup.sh`'."""
    after = README[README.index("Command 1 is `scripts/setup.sh`"):]
    return after[after.index("```bash") + 7:after.index("```", after.index("```bash") + 7)]


def _selections(text: str) -> list[str]:
    return re.findall(r"materialize(?: -m pipeline)? --select (\S+)", text)


def _main_job_runs(script: str) -> list[str]:
    """The selections scripts/main_job.sh hands scripts/materialize.py (the loop's once)."""
    return [s.split("@")[0] for s in re.findall(r"runs\+?=\(['\"]([^'\"]+)['\"]\)", script)]


def test_command1_block_runs_what_main_job_runs():
    block = _command1_block()
    script = (REPO / "scripts" / "main_job.sh").read_text()
    assert [s.strip("'") for s in _selections(block)] == _main_job_runs(script) == [
        "*nurd_eval", "baseline_eval", "completion_times,operator_budgets,comparison_tables"]
    assert "baseline_eval@$rule" in script and "--partition $rule" in block
    loop = re.search(r"for rule in ([^;]+); do", block)
    assert loop and tuple(loop.group(1).split()) == REFERENCE_RULES
    assert "REFERENCE_RULES" in script        # the script takes the rules from the registry
    assert "scripts/summary.py" in block and "scripts/summary.py" in script
    # scripts/run.sh --help names every rule too
    run_help = (REPO / "scripts" / "run.sh").read_text()
    assert all(rule in run_help for rule in REFERENCE_RULES)


def test_the_rules_named_are_the_registrys():
    n = len(REFERENCE_RULES)
    counts = [int(m) for m in re.findall(r"\b(\d+) (?:free )?reference rules", README)]
    assert counts and set(counts) == {n}, counts
    free = re.search(r"\((\w+) free rules and the oracle\)", README)
    assert free and NUMBERS[free.group(1)] == n - 1 and "oracle" in REFERENCE_RULES


def _timings() -> dict[str, set[str]]:
    """Step -> every wall clock docs/TIMINGS.md records for it (benchmarks/timings.py and by hand)."""
    out: dict[str, set[str]] = {}
    for line in (REPO / "docs" / "TIMINGS.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and re.fullmatch(r"\d+:\d\d", cells[2]):
            out.setdefault(cells[0], set()).add(cells[2])
    return out


def test_timings_md_is_one_row_per_step_as_benchmarks_timings_writes_it(tmp_path):
    """Every step once, and rewriting the file with the script changes none of its rows (no row added
    or typed by hand beside the script's table)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("timings", REPO / "benchmarks" / "timings.py")
    timings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timings)
    text = (REPO / "docs" / "TIMINGS.md").read_text()
    steps_table = text.split(timings.SLOWEST_HEADING)[0]   # the slowest tests' list below it: tested below
    steps = [line.split("|")[1].strip() for line in steps_table.splitlines() if line.startswith("| ")][1:]
    assert steps and len(steps) == len(set(steps)) and set(steps) <= set(timings.STEPS), steps
    copy = tmp_path / "TIMINGS.md"
    copy.write_text(text)
    timings.write_markdown([], copy, "unused")
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert [line for line in copy.read_text().splitlines() if line.startswith("|")] == table


def test_the_tests_step_lists_the_slowest_tests_from_pytests_durations(tmp_path):
    """A test's setup, call and teardown add up (a parametrized id may hold spaces); the slowest come
    first; the list replaces the file's own when the tests are measured and is kept otherwise."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("timings", REPO / "benchmarks" / "timings.py")
    timings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timings)
    log = ("..\n=== slowest durations ===\n"
           "30.00s setup    tests/test_a.py::test_one\n"
           "25.50s call     tests/test_b.py::test_ui[dagster dev -p {port}]\n"
           "10.00s call     tests/test_a.py::test_one\n"
           "1.25s teardown tests/test_b.py::test_ui[dagster dev -p {port}]\n"
           "0.50s call     tests/test_c.py::test_quick\n"
           "(9 durations < 0.005s hidden.  Use -vv to show these durations.)\n3 passed in 67.25s\n")
    assert timings.slowest_tests(log, 2) == [("tests/test_a.py::test_one", 40.0, 30.0),
                                             ("tests/test_b.py::test_ui[dagster dev -p {port}]", 26.75, 0.0)]
    out = tmp_path / "TIMINGS.md"
    timings.write_markdown([], out, "abc", timings.slowest_tests(log))
    listed = [line for line in out.read_text().split(timings.SLOWEST_HEADING)[1].splitlines() if line.startswith("| `")]
    assert listed == ["| `tests/test_a.py::test_one` | 40.0 | 30.0 |",
                      "| `tests/test_b.py::test_ui[dagster dev -p {port}]` | 26.8 | 0.0 |",
                      "| `tests/test_c.py::test_quick` | 0.5 | 0.0 |"]
    written = out.read_text()
    timings.write_markdown([], out, "def")
    assert out.read_text() == written


#: the README's timing rows -> the step of docs/TIMINGS.md they quote
README_ROWS = {"install (`scripts/setup.sh`": "install", "command 1 after the install": "command1",
               "`comparison_tables` alone": "comparison", "the tests (command 2": "tests"}


def test_the_times_quoted_are_timings_md():
    measured = _timings()
    rows = [line for line in README.splitlines() if line.startswith("| ")]
    for start, step in README_ROWS.items():
        (row,) = [r for r in rows if r.startswith(f"| {start}")]
        quoted = row.split("|")[2].strip()
        assert quoted in measured.get(step, set()), (step, quoted, measured.get(step))
    setup = re.search(r"about (\w+) minutes?", (REPO / "scripts" / "setup.sh").read_text())
    install = min(measured["install"], key=lambda t: tuple(map(int, t.split(":"))))
    minutes = round(int(install.split(":")[0]) + int(install.split(":")[1]) / 60)
    assert setup and int(NUMBERS.get(setup.group(1), setup.group(1))) == minutes, (setup, install)


def test_the_settings_table_is_one_table_of_every_variable():
    section = _section("Settings")
    start = section.index("| variable | default | meaning |")
    table = section[start:section.index("\n\n", start)].splitlines()
    assert not section[start + len("\n".join(table)):].lstrip("\n").startswith("|")   # no split-off half
    assert all(line.startswith("|") for line in table)
    listed = {m for line in table for m in re.findall(r"^\| `(NURD_\w+)`", line)}
    assert listed == set(Settings.variables().values())


def test_the_settings_table_is_generated_from_the_models():
    """The README's table is stragglers.settings.describe() of the stages' models, as written by
    scripts/settings_table.py (a changed default or meaning must be regenerated, not edited twice)."""
    section = _section("Settings")
    start = section.index("| variable | default | meaning |")
    assert section[start:section.index("\n\n", start)] == describe()


def _prose() -> str:
    """The README a reader reads as sentences: without its command blocks, inline code, link targets
    and the generated settings table (tested above)."""
    text = re.sub(r"```.*?```", "", README, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("| `NURD_"))
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"`[^`]*`", "", text)
    # names, not quantities: the two commands, the paper's Table 3 and its venue
    return re.sub(r"\b(?:[Cc]ommand [12]|Table 3|MLSys 2022)\b", "", text)


def _sources() -> dict[str, str]:
    """Every number the README may quote -> where it comes from."""
    from stragglers.prediction.sweep import HEADLINE_BUDGET

    pyproject = (REPO / "pyproject.toml").read_text()
    timings = (REPO / "docs" / "TIMINGS.md").read_text()
    cores = re.search(r"on (\d+) cores", timings).group(1)
    main_job = (REPO / "scripts" / "main_job.sh").read_text()
    # the Dagster runs of the main job: one per run it lists, the loop's once per rule
    runs = len(_main_job_runs(main_job)) - 1 + len(REFERENCE_RULES)
    out = {f"{HEADLINE_BUDGET * 100:g}%": "stragglers.prediction.sweep.HEADLINE_BUDGET",
           str(len(REFERENCE_RULES)): "REFERENCE_RULES", str(runs): "scripts/main_job.sh",
           re.search(r'requires-python = ">=([\d.]+)', pyproject).group(1): "pyproject.toml",
           re.search(r'"dagster>=([\d.]+)', pyproject).group(1): "pyproject.toml", cores: "docs/TIMINGS.md"}
    out.update({t: "docs/TIMINGS.md" for times in _timings().values() for t in times})
    return out


def test_every_number_in_the_readme_is_read_from_its_source():
    sources = _sources()
    numbers = re.findall(r"(?<![\w.])\d+(?:[.:]\d+)*%?", _prose())
    assert numbers and [n for n in numbers if n not in sources] == [], sources
    # the counts the Table 3 command's comment gives, against the method registry
    from stragglers.prediction.methods import BASELINES, SURVIVAL_FAMILY

    m = re.search(r"the (\d+) baselines, the survival family \((\d+)\) and the (\d+) reference rules \((\d+) partitions\)",
                  README)
    assert m and tuple(map(int, m.groups())) == (len(BASELINES) - len(SURVIVAL_FAMILY) - len(REFERENCE_RULES),
                                                 len(SURVIVAL_FAMILY), len(REFERENCE_RULES), len(BASELINES))
    runs = next(n for n, src in sources.items() if src == "scripts/main_job.sh")
    assert f"That is {runs} Dagster runs" in README


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 250
