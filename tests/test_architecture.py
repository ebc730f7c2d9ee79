"""Dependencies run one way (docs/ARCHITECTURE.md, "Layers"): every import of the domain package,
module level or inside a function, read with ``ast`` and checked against the allowed order."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Each layer of ``stragglers`` and the layers it may import (besides itself). Written once, here.
#: ``base`` is the package root (SQL_DIR), the failpoints and the trace formats (plain data: the
#: NURD_TRACE values and what distinguishes them); ``settings`` (the package stragglers/settings/:
#: every stage's model and the composed settings) sits on it, below every stage; diagnosis, nodes and failures (Hound,
#: Ouyang et al., El-Sayed et al.) stand beside prediction: they read traces and the warehouse,
#: never each other's internals; reports read everything.
_BELOW_SYSTEMS = {"base", "settings", "traces", "warehouse"}
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "settings": {"base"},
    "traces": {"base", "settings"},
    "warehouse": {"base", "settings", "traces"},
    "prediction": _BELOW_SYSTEMS,
    "diagnosis": _BELOW_SYSTEMS,
    "nodes": _BELOW_SYSTEMS,
    "failures": _BELOW_SYSTEMS,
    "reports": {"base", "settings", "traces", "warehouse", "prediction", "diagnosis", "nodes", "failures"},
    # the operator's console commands: an answer from a directory of logs, through the stages below
    "advice": {"base", "settings", "traces", "warehouse", "prediction"},
}


def layer(module: str) -> str:
    """``stragglers.x.y`` -> its layer (``stragglers`` and ``stragglers.trace_formats`` are ``base``; the package ``stragglers.settings``, every stage's
    settings model and the composed ones, is ``settings``, below every stage)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("trace_formats", "__init__"):
        return "base"
    return parts[1]


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> list[tuple[str, int]]:
    """(imported module, line) for every import of the package in ``path``, at any depth."""
    package = root.name
    me = module_name(path, root).split(".")
    here = me if path.name == "__init__.py" else me[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == package]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == package:
                out.append((target, node.lineno))
    return out


def violations(root: Path) -> list[str]:
    """Every import that runs up the order, and every cycle between layers, in package ``root``."""
    found = []
    edges: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        src = layer(module_name(path, root))
        for target, line in imports(path, root):
            dst = layer(target)
            if dst == src:
                continue
            edges.setdefault(src, set()).add(dst)
            if src not in ALLOWED:
                found.append(f"{path.relative_to(root.parent)}:{line}: layer {src!r} is not in the order")
            elif dst not in ALLOWED[src]:
                found.append(f"{path.relative_to(root.parent)}:{line}: {src} imports {target} ({dst} is not "
                             f"below {src})")
    # a cycle between layers (also one the table would allow by mistake)
    def reach(a: str, seen: set[str]) -> set[str]:
        for b in edges.get(a, ()):
            if b not in seen:
                seen.add(b)
                reach(b, seen)
        return seen
    found += [f"cycle: {a} reaches itself" for a in sorted(edges) if a in reach(a, set())]
    return found


def late_imports(root: Path) -> list[str]:
    """Every import of the package inside a function in package ``root``: a circle dodged by a late
    import is still a circle, within a layer too (late imports of other libraries are not counted)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        functions = [n for n in ast.walk(ast.parse(path.read_text(), str(path)))
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        late = {n.lineno for f in functions for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        found += [f"{path.relative_to(root.parent)}:{line}: imports {target} inside a function"
                  for target, line in imports(path, root) if line in late]
    return found


def test_the_domain_package_imports_run_one_way():
    # no import runs up the order and no layers form a cycle, with no exception ...
    assert violations(REPO / "stragglers") == []
    # ... and none hides in a function
    assert late_imports(REPO / "stragglers") == []


def test_every_layer_is_in_the_order():
    layers = {p.name for p in (REPO / "stragglers").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert layers <= set(ALLOWED), layers - set(ALLOWED)


@pytest.mark.parametrize("where, line", [
    ("settings/prediction.py", "from stragglers.traces.fetch import fetch_trace"),    # module level
    ("trace_formats.py", "from stragglers.settings import Settings"),                 # base, up to settings
    ("traces/fetch.py", "def f():\n    from stragglers.warehouse import build\n"),    # inside a function
    ("prediction/run.py", "from stragglers.reports import comparison"),
    ("nodes/build.py", "from ..failures import predict"),                            # relative, sideways
])
def test_an_upward_import_is_caught(tmp_path, where, line):
    root = tmp_path / "stragglers"
    for name in set(ALLOWED) - {"base"}:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    target = root / where
    target.write_text(line + "\n")
    found = violations(root)
    assert len(found) == 1 and found[0].startswith(f"stragglers/{where}:"), found
    target.write_text("")
    assert violations(root) == []


def test_a_late_import_within_a_layer_is_caught(tmp_path):
    root = tmp_path / "stragglers"
    (root / "reports").mkdir(parents=True)
    for name in ("__init__.py", "reports/__init__.py", "reports/results.py"):
        (root / name).write_text("")
    (root / "reports" / "comparison.py").write_text("def f():\n    from stragglers.reports import results\n")
    assert violations(root) == []   # allowed by the order ...
    assert [v.split(":")[0] for v in late_imports(root)] == ["stragglers/reports/comparison.py"]   # ... not late


# ----------------------------------------------------------------------------- comments say intent
#: The folders whose comments and docstrings a newcomer reads beside the code.
CODE_DIRS = ("stragglers", "assets", "pipeline", "sql", "scripts", "benchmarks", "studies", "tests")
#: A comment that cites a ticket (the word issue, or a hash sign, before a number), a numbered pass or
#: what a name or a grid was once, instead of saying what the code is for.
HISTORY = re.compile(r"\bissues?\s*#?\d+|(?<![\w&#])#\d+\b|\b(?:first|second|third|fourth|fifth|last|earlier|"
                     r"previous) pass\b|\bformer name\b|\bused before\b", re.IGNORECASE)


def comments(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring in a Python, SQL or shell file."""
    text = path.read_text()
    if path.suffix == ".sql":
        return [(i, line.split("--", 1)[1]) for i, line in enumerate(text.splitlines(), 1) if "--" in line]
    if path.suffix == ".sh":
        return [(i, line.split("#", 1)[1]) for i, line in enumerate(text.splitlines(), 1)
                if line.lstrip().startswith("#")]
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                found += [(node.body[0].lineno + i, line) for i, line in enumerate(doc.splitlines())]
    return found


def history_citations(root: Path, dirs=CODE_DIRS) -> list[str]:
    files = [p for d in dirs for ext in ("py", "sql", "sh") for p in sorted((root / d).rglob(f"*.{ext}"))
             if ".venv" not in p.parts]
    return [f"{p.relative_to(root)}:{line}: {text.strip()}" for p in files for line, text in comments(p)
            if HISTORY.search(text)]


def test_no_comment_cites_an_issue_or_a_past_version():
    # a comment says why the code is as it is; the ticket it came from is in git's history
    assert history_citations(REPO) == []


@pytest.mark.parametrize("name, source", [
    ("a.py", "x = 1  # the operator's protocol (issue 26)\n"),
    ("a.py", '"""What a scheduler learns, see #27."""\n'),
    ("a.py", "def f():\n    \"\"\"Measured in the third pass.\"\"\"\n"),
    ("a.sql", "-- the survival family's threshold (issue 27)\nSELECT 1\n"),
    ("a.sh", "# the former name of the resource\necho hi\n"),
])
def test_a_comment_citing_history_is_caught(tmp_path, name, source):
    (tmp_path / "stragglers").mkdir()
    path = tmp_path / "stragglers" / name
    path.write_text(source)
    assert len(history_citations(tmp_path, ("stragglers",))) == 1
    path.write_text(source.replace("26", "").replace("#27", "").replace("issue", "").replace("third pass", "")
                    .replace("27", "").replace("former name", "name"))
    assert history_citations(tmp_path, ("stragglers",)) == []


# ----------------------------------------------------------------------------- the Dagster glue
#: The modules of ``assets/`` every asset module may import: helpers, never another stage's assets
#: (an asset names its upstream assets by ``dg.AssetKey``).
ASSET_HELPERS = {"common", "resources", "checks"}
#: Decorators that define an asset or an asset check (by their last name: ``dg.asset``, ``automated_asset``).
ASSET_DECORATORS = {"asset", "automated_asset", "observable_source_asset", "multi_asset"}
CHECK_DECORATORS = {"asset_check"}
#: The factories of ``assets/`` whose calls define an asset or a check: name -> (kind, the call's
#: (asset, check) or asset name). A decorator inside another function is a factory's template.
FACTORIES = {
    "table_check": lambda call: ("check", (_name(call.args[0]), f"{_constant(call.args[1])}_valid")),
    "_failure_step": lambda call: ("asset", _constant(call.args[0])),
    "evaluation_tables_asset": lambda call: ("asset", _constant(call.args[0])),
}
#: An asset or a check is glue: read, call one domain function, write, return metadata.
MAX_ASSET_LINES = 40


def _name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _constant(node: ast.AST):
    return node.value if isinstance(node, ast.Constant) else None


def _decorator(node: ast.AST) -> tuple[str, dict]:
    """(last name, constant keywords) of a decorator, called or not."""
    if isinstance(node, ast.Call):
        return _name(node.func), {k.arg: k.value for k in node.keywords if k.arg}
    return _name(node), {}


def glue_functions(root: Path) -> list[tuple[Path, ast.FunctionDef, str, dict, ast.FunctionDef | None]]:
    """(file, function, decorator kind, its keywords, the function it is defined in) of every function
    of ``root`` decorated as an asset or a check."""
    found = []
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        outer = {inner: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                 for inner in ast.walk(f) if isinstance(inner, ast.FunctionDef) and inner is not f}
        for f in ast.walk(tree):
            if not isinstance(f, ast.FunctionDef):
                continue
            for d in f.decorator_list:
                name, keywords = _decorator(d)
                kind = "asset" if name in ASSET_DECORATORS else "check" if name in CHECK_DECORATORS else None
                if kind:
                    found.append((path, f, kind, keywords, outer.get(f)))
    return found


def defined_in(root: Path) -> tuple[set[str], set[tuple[str, str]], list[str]]:
    """(asset names, (asset, check) names, problems) defined in the asset modules of ``root``, read
    from the source: decorated functions and the factories' calls."""
    assets, checks, problems = set(), set(), []
    for path, f, kind, keywords, outer in glue_functions(root):
        name = keywords.get("name")
        if name is not None and not isinstance(name, ast.Constant):
            if outer is None or outer.name not in FACTORIES:
                problems.append(f"{path.name}:{f.lineno}: {f.name} is made by {outer.name if outer else '?'}, "
                                f"a factory this test does not know (add it to FACTORIES)")
            continue
        own = _constant(name) if name is not None else f.name
        if kind == "asset":
            assets.add(own)
        else:
            checks.add((_name(keywords["asset"]), own))
    for path in sorted(root.glob("*.py")):
        for call in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(call, ast.Call) and _name(call.func) in FACTORIES:
                kind, made = FACTORIES[_name(call.func)](call)
                (assets if kind == "asset" else checks).add(made)
    return assets, checks, problems


def loaded_by(defs) -> tuple[set[str], set[tuple[str, str]]]:
    """(asset names, (asset, check) names) of a ``Definitions``."""
    assets = {k.to_user_string() for a in defs.assets for k in (a.keys if hasattr(a, "keys") else [a.key])}
    checks = {(k.asset_key.to_user_string(), k.name) for c in defs.asset_checks for k in c.check_keys}
    return assets, checks


def test_the_definitions_load_every_asset_and_check_of_the_asset_modules():
    from pipeline.definitions import defs

    assets, checks, problems = defined_in(REPO / "assets")
    assert problems == []
    assert len(assets) >= 25 and len(checks) >= 20
    assert loaded_by(defs) == (assets, checks)


def test_a_check_the_loader_cannot_see_is_caught(tmp_path, monkeypatch):
    """A check kept outside a module-level list (here in a dict) is defined but not loaded."""
    import importlib

    import dagster as dg

    (tmp_path / "glue_probe").mkdir()
    (tmp_path / "glue_probe" / "__init__.py").write_text("")
    source = ("import dagster as dg\n\n\n@dg.asset\ndef a():\n    return 1\n\n\n"
              "@dg.asset_check(asset=a)\ndef a_positive():\n    return dg.AssetCheckResult(passed=True)\n\n\n"
              "checks = [a_positive]\n")
    (tmp_path / "glue_probe" / "mod.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))

    def loaded():
        module = importlib.reload(importlib.import_module("glue_probe.mod"))
        return loaded_by(dg.Definitions(assets=dg.load_assets_from_modules([module]),
                                        asset_checks=dg.load_asset_checks_from_modules([module])))

    defined = defined_in(tmp_path / "glue_probe")
    assert defined == ({"a"}, {("a", "a_positive")}, []) and loaded() == defined[:2]
    (tmp_path / "glue_probe" / "mod.py").write_text(source.replace("checks = [a_positive]",
                                                                   "checks = {'a': a_positive}\ndel a_positive"))
    assert loaded() != defined_in(tmp_path / "glue_probe")[:2]


def sideways_imports(root: Path) -> list[str]:
    """Every import, in a module of ``root`` (assets/), of another module of it that is not a helper."""
    found = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[-2:-1] == ["assets"]:
                targets = [node.module.split(".")[-1]]
            elif isinstance(node, ast.ImportFrom) and node.module in ("assets", "nurd_pipeline.assets"):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name.split(".")[-1] for a in node.names if a.name.split(".")[-2:-1] == ["assets"]]
            found += [f"{path.name}:{node.lineno}: imports assets.{t}" for t in targets
                      if t.split(".")[0] not in ASSET_HELPERS | {path.stem}]
    return found


def test_asset_modules_import_only_the_helpers():
    assert sideways_imports(REPO / "assets") == []


@pytest.mark.parametrize("line", ["from .prediction import nurd_eval", "from . import warehouse",
                                  "from nurd_pipeline.assets.traces import raw_trace", "import assets.nodes"])
def test_a_sideways_asset_import_is_caught(tmp_path, line):
    (tmp_path / "common.py").write_text("")
    (tmp_path / "budgets.py").write_text("from .common import md_table\n")
    assert sideways_imports(tmp_path) == []
    (tmp_path / "budgets.py").write_text(f"from .common import md_table\n{line}\n")
    assert [v.split(":")[0] for v in sideways_imports(tmp_path)] == ["budgets.py"]


def _code_lines(f: ast.FunctionDef) -> int:
    """``f``'s lines from ``def`` to its end, its docstring (the asset's description) left out."""
    doc = f.body[0] if ast.get_docstring(f) else None
    return f.end_lineno - f.lineno + 1 - (doc.end_lineno - doc.lineno + 1 if doc else 0)


def long_glue(root: Path, limit: int = MAX_ASSET_LINES) -> list[str]:
    """Every asset or check function of ``root`` longer than ``limit`` lines of code (``def`` to its end)."""
    return [f"{path.name}:{f.lineno}: {f.name} has {_code_lines(f)} lines"
            for path, f, *_ in glue_functions(root) if _code_lines(f) > limit]


def test_every_asset_is_glue():
    assert long_glue(REPO / "assets") == []


def test_a_long_asset_is_caught(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_ASSET_LINES))
    (tmp_path / "a.py").write_text(f"import dagster as dg\n\n\n@dg.asset\ndef a():\n{body}")
    assert [v.split(":")[0] for v in long_glue(tmp_path)] == ["a.py"]
    (tmp_path / "a.py").write_text(f"import dagster as dg\n\n\n@dg.asset\ndef a():\n{body[body.index(chr(10)) + 1:]}")
    assert long_glue(tmp_path) == []
    described = '    """' + "\n    ".join(["what the asset makes"] * MAX_ASSET_LINES) + '"""\n'
    (tmp_path / "a.py").write_text(f"import dagster as dg\n\n\n@dg.asset\ndef a():\n{described}    return 1\n")
    assert long_glue(tmp_path) == []    # its description is not code


def _layout_names() -> list[str]:
    """The paths docs/ARCHITECTURE.md's layout names (its first code block: a tree by indentation,
    entries such as ``views.py / figures.py`` or ``hound.py, nodes.py`` naming several)."""
    block = (REPO / "docs" / "ARCHITECTURE.md").read_text().split("```\n", 2)[1]
    stack, named = [], []
    for line in block.splitlines():
        m = re.match(r"^( *)(\S.*?)(?:\s{2,}|$)", line)
        if not m or line.startswith(" " * 29):      # a description's continuation
            continue
        depth, head = len(m.group(1)) // 2, m.group(2)
        entries = [e.strip() for e in re.split(r" / |, ", head)]
        stack = stack[:depth]
        named += ["/".join([*stack, e.rstrip("/")]) for e in entries if re.fullmatch(r"[\w.\-/*]+", e)]
        if head.endswith("/") and len(entries) == 1:
            stack.append(head.rstrip("/"))
    return named


def test_the_architecture_guide_names_only_what_exists_and_every_module_of_the_domains_core():
    named = _layout_names()
    assert len(named) > 100
    assert [n for n in named if not any(REPO.glob(n))] == []
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    paths = set(re.findall(r"\b((?:stragglers|assets|pipeline|sql|tests|scripts|benchmarks|studies)/[\w./-]*\w)", text))
    assert [p for p in sorted(paths) if not (REPO / p).exists() and not p.endswith("_")] == []
    # a newcomer finds every module of the engine's, the warehouse's and the report's packages in it
    for package in ("stragglers/prediction", "stragglers/warehouse", "stragglers/reports"):
        modules = [p.relative_to(REPO).as_posix() for p in (REPO / package).rglob("*.py") if p.name != "__init__.py"]
        assert sorted(set(modules) - set(named)) == [], package
