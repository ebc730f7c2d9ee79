"""The README says what the scripts do and what docs/TIMINGS.md measured: command 1's block runs the
assets scripts/main_job.sh runs, with every reference rule of the method registry; the times it
quotes are TIMINGS.md's; the settings table is one table listing every NURD_* variable; every other
number it quotes outside its command blocks is read from its source, and a number with no source
fails."""

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
    from benchmarks import timings

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
    from benchmarks import timings

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


SETTINGS_MD = (REPO / "docs" / "SETTINGS.md").read_text()


def test_the_settings_table_is_one_table_of_every_variable():
    section = SETTINGS_MD
    start = section.index("| variable | default | meaning |")
    table = section[start:section.index("\n\n", start)].splitlines()
    assert not section[start + len("\n".join(table)):].lstrip("\n").startswith("|")   # no split-off half
    assert all(line.startswith("|") for line in table)
    listed = {m for line in table for m in re.findall(r"^\| `(NURD_\w+)`", line)}
    assert listed == set(Settings.variables().values())


def test_the_settings_table_is_generated_from_the_models():
    """docs/SETTINGS.md's table is stragglers.settings.describe() of the stages' models, as written by
    scripts/settings_table.py (a changed default or meaning must be regenerated, not edited twice)."""
    section = SETTINGS_MD
    start = section.index("| variable | default | meaning |")
    assert section[start:section.index("\n\n", start)] == describe()


def _outside_code_and_links() -> list[str]:
    """The README's lines as a reader reads them: without its fenced command blocks and without link
    and image targets (a target is a path, not a quantity); inline code stays."""
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group().count("\n"), README, flags=re.S)
    return re.sub(r"\]\([^)]*\)", "]", text).splitlines()


#: every digit sequence outside code blocks and links, as it is found
DIGITS = re.compile(r"\d+(?:[.:]\d+)*%?")


def _quoted() -> list[tuple[str, re.Pattern[str], object]]:
    """Every number the README may quote: (where it comes from, the pattern of the words around it with
    the number as its group, the value its source gives: one value, or a set of the allowed ones)."""
    from stragglers.prediction.verdicts.tuning import HEADLINE_BUDGET
    from stragglers.trace_formats import TRACES

    pyproject = (REPO / "pyproject.toml").read_text()
    timings_md = (REPO / "docs" / "TIMINGS.md").read_text()
    main_job = (REPO / "scripts" / "main_job.sh").read_text()
    ui = (REPO / "scripts" / "ui.sh").read_text()
    measured = _timings()
    # the two commands, numbered in their block
    two = _section("The two commands")
    commands = set(re.findall(r"^# (\d)\. ", two[two.index("```bash"):], flags=re.M))
    rules = [
        ("docs/PROTOCOL.md (the paper's citation)", r"MLSys (\d{4})",
         re.search(r"MLSys (\d{4})", (REPO / "docs" / "PROTOCOL.md").read_text()).group(1)),
        ("docs/PAPER_NUMBERS.md (the paper's table)", r"Table (\d+)",
         set(re.findall(r"Table (\d+)", (REPO / "docs" / "PAPER_NUMBERS.md").read_text()))),
        ("the two commands' block", r"[Cc]ommand (\d)", commands),
        ("pyproject.toml requires-python", r"Python (\d+\.\d+)",
         re.search(r'requires-python = ">=([\d.]+)', pyproject).group(1)),
        ("pyproject.toml's dagster pin", r"Dagster (\d+\.\d+)'s",
         re.search(r'"dagster>=([\d.]+)', pyproject).group(1)),
        ("scripts/main_job.sh's runs, the loop's once per rule", r"That is (\d+) Dagster runs",
         str(len(_main_job_runs(main_job)) - 1 + len(REFERENCE_RULES))),
        ("REFERENCE_RULES", r"the (\d+) reference rules", str(len(REFERENCE_RULES))),
        ("stragglers.prediction.verdicts.sweep.HEADLINE_BUDGET", r"at (\d+%) extra machine time",
         f"{HEADLINE_BUDGET * 100:g}%"),
        ("docs/TIMINGS.md's machine", r"on (\d+) cores", re.search(r"on (\d+) cores", timings_md).group(1)),
        ("scripts/ui.sh's address", r"http://(127\.0\.0\.1:\d+)",
         "127.0.0.1:" + re.search(r'port="\$\{1:-(\d+)\}"', ui).group(1)),
        ("stragglers.trace_formats.TRACES (a trace's name)", r"`([a-z]+_\d{4})`", set(TRACES)),
        ("the bucket's checksum file (stragglers/warehouse/locate.py)", r"`(SHA256SUM)`",
         "SHA256SUM" if "SHA256SUM" in (REPO / "stragglers" / "warehouse" / "locate.py").read_text() else None),
    ]
    # the time table: each row's time is its step's in docs/TIMINGS.md
    for start, step in README_ROWS.items():
        rules.append((f"docs/TIMINGS.md, step {step}", r"^\| " + re.escape(start) + r"[^|]*\| (\d+:\d\d) \|",
                      measured.get(step, set())))
    return [(src, re.compile(pattern), value) for src, pattern, value in rules]


def test_every_number_in_the_readme_is_read_from_its_source():
    """Any digit sequence of the README outside code blocks and links is either quoted from its source
    (a rule of _quoted, whose value is checked here; the settings table is docs/SETTINGS.md's, checked
    equal to describe() above); a number in any other place fails, so a new
    number cannot go untested."""
    rules = _quoted()
    used = {src: 0 for src, _, _ in rules}
    untested, wrong = [], []
    lines = _outside_code_and_links()
    for line in lines:
        covered: list[tuple[int, int]] = []
        for src, pattern, value in rules:
            for m in pattern.finditer(line):
                used[src] += 1
                got = m.groups() if len(m.groups()) > 1 else m.group(1)
                ok = got in value if isinstance(value, set) else got == value
                if not ok:
                    wrong.append((src, got, value, line.strip()))
                covered += [m.span(g) for g in range(1, len(m.groups()) + 1)]
        for d in DIGITS.finditer(line):
            if not any(a <= d.start() and d.end() <= b for a, b in covered):
                untested.append((d.group(), line.strip()[:120]))
    assert untested == [], f"numbers in the README with no source check: {untested}"
    assert wrong == [], f"numbers in the README that differ from their source: {wrong}"
    # every rule still quotes something (a rule left behind would test nothing)
    assert [src for src, n in used.items() if n == 0] == []
    assert "(docs/SETTINGS.md)" in README      # the generated settings table is there, not here


def test_the_counts_in_the_command_blocks_are_the_registrys():
    """Inside the command blocks, the counts a comment gives: the Table 3 command's and the picture's."""
    from stragglers.prediction.methods import BASELINES, SURVIVAL_FAMILY

    m = re.search(r"the (\d+) baselines, the survival family \((\d+)\) and the (\d+) reference rules \((\d+) partitions\)",
                  README)
    assert m and tuple(map(int, m.groups())) == (len(BASELINES) - len(SURVIVAL_FAMILY) - len(REFERENCE_RULES),
                                                 len(SURVIVAL_FAMILY), len(REFERENCE_RULES), len(BASELINES))
    picture = README[README.index("trace_source"):]
    per_method = re.search(r"\((\d+) partition per method,", picture)
    rules = re.search(r"\s(\d+) reference rules\)", picture)
    assert per_method and rules and (int(per_method.group(1)), int(rules.group(1))) == (1, len(REFERENCE_RULES))


def test_the_number_check_catches_a_new_number():
    """The check above fails on a number added anywhere outside code blocks and links."""
    global README
    original = README
    try:
        for added in ("\nIt runs 17 jobs.\n", "\n| a row | 9:59 | |\n", "\nSee `google_2012`.\n"):
            README = original + added
            try:
                test_every_number_in_the_readme_is_read_from_its_source()
            except AssertionError:
                continue
            raise AssertionError(f"an untested number passed: {added!r}")
    finally:
        README = original


#: counts written as words (an article "one" is not a count, so only these words are checked)
COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "both": 2}


def test_every_count_written_as_a_word_is_read_from_its_source():
    """The counts the README writes as words are its sources' too, and a new one fails until it has a
    rule here."""
    from stragglers.settings.protocols import both_views
    from stragglers.settings.prediction import EvaluationSettings

    two = _section("The two commands")
    cluster = _section("Run on a cluster")
    cluster_block = cluster[cluster.index("```bash"):cluster.index("```", cluster.index("```bash") + 7)]
    baselines = (REPO / "scripts" / "baselines.sh").read_text()
    rules = {
        r"The (two) commands": len(set(re.findall(r"^# (\d)\. ", two[two.index("```bash"):], flags=re.M))),
        r"\((five) free rules and the oracle\)": len(REFERENCE_RULES) - 1,
        # one process per terminal: the scheduler, each worker, the Dagster command
        r"(four) terminals": len(re.findall(r"^\.venv/bin/(?:dask|dagster) ", cluster_block, flags=re.M)),
        # scripts/baselines.sh runs the Table 3 block's last two commands
        r"runs the last (two)": len(re.findall(r"^\.venv/bin/dagster asset materialize", baselines, flags=re.M)),
        r"retakes (both) pictures": len(re.findall(r"!\[[^\]]*\]\(docs/img/[^)]+\.png\)", README)),
        # the evaluation assets write the configured protocol and its other view
        r"under (both) protocols": len(both_views(EvaluationSettings())),
    }
    lines = _outside_code_and_links()
    covered, wrong = {}, []
    for i, line in enumerate(lines):
        for pattern, value in rules.items():
            for m in re.finditer(pattern, line):
                covered.setdefault(i, []).append(m.span(1))
                if COUNT_WORDS[m.group(1).lower()] != value:
                    wrong.append((pattern, m.group(1), value))
    untested = [(w.group(), line.strip()[:100]) for i, line in enumerate(lines)
                for w in re.finditer(r"\b(?:" + "|".join(COUNT_WORDS) + r")\b", line, flags=re.I)
                if not any(a <= w.start() and w.end() <= b for a, b in covered.get(i, []))]
    assert untested == [] and wrong == [], (untested, wrong)


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 250
