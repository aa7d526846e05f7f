"""The import arrows: the import-linter contracts in pyproject.toml hold, and no module of the app
reaches itself again through its imports (imports inside functions count too), whether grimp
(import-linter's graph) or the modules' own syntax trees are read."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "tokenizers_app"


def test_the_import_linter_contracts_hold():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint_imports)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def import_graph() -> dict[str, set[str]]:
    """Module -> the app's modules it imports (at the top or inside functions)."""
    graph = grimp.build_graph("tokenizers_app", cache_dir=None)
    return {module: set(graph.find_modules_directly_imported_by(module))
            for module in graph.modules}


def module_name(path: Path, root: Path) -> str:
    """``tokenizers_app/services/runs.py`` -> ``tokenizers_app.services.runs``; a package's
    ``__init__.py`` is the package."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool,
                     modules: set[str]) -> set[str]:
    """The app's modules one import statement names. ``from package import name`` names the
    module ``package.name`` when there is one, else the package (its ``__init__``, which
    re-exports the name): an import of a package's submodule is an arrow to that submodule, not
    to every module the package's ``__init__`` imports."""

    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    if isinstance(node, ast.Import):
        return {m for alias in node.names if (m := known(alias.name))}
    if node.level:
        base = importer if is_package else importer.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        source = f"{base}.{node.module}" if node.module else base
    else:
        source = node.module or ""
    found = set()
    for alias in node.names:
        if f"{source}.{alias.name}" in modules:
            found.add(f"{source}.{alias.name}")
        elif (m := known(source)) is not None:
            found.add(m)
    return found


def syntax_import_graph(root: Path = APP) -> dict[str, set[str]]:
    """Module -> the app's modules it imports, read from every module's syntax tree: imports at
    the top, inside functions and under ``if TYPE_CHECKING`` alike (nothing is imported, so a
    lazy import cannot hide an arrow)."""
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(path, root) for path in paths}
    edges: dict[str, set[str]] = {}
    for path in paths:
        importer = module_name(path, root)
        tree = ast.parse(path.read_text(), filename=str(path))
        edges[importer] = {
            target for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for target in imported_modules(node, importer, path.name == "__init__.py", modules)
            if target != importer}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, with an
    explicit stack), or of one module that imports itself."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in edges[node]:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_cycles_finds_a_circle_of_imports():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_app_imports_itself_through_others():
    assert cycles(import_graph()) == []


def test_the_syntax_trees_of_the_app_hold_no_circle_of_imports():
    """Every import statement of every module, inside functions too: no circle (the services
    send tasks by name, so ``tasks.py`` importing a service inside its body closes none)."""
    edges = syntax_import_graph()
    assert "tokenizers_app.services.runs" in edges["tokenizers_app.tasks"]  # read inside bodies
    assert cycles(edges) == []


def test_the_syntax_graph_resolves_relative_and_package_imports(tmp_path):
    package = tmp_path / "tokenizers_app"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .leaf import thing\n")
    (package / "sub" / "leaf.py").write_text("def f():\n    from .. import top\n")
    (package / "top.py").write_text("from .sub import thing, leaf\nimport tokenizers_app.sub\n")
    edges = syntax_import_graph(package)
    assert edges == {"tokenizers_app": set(),
                     "tokenizers_app.sub": {"tokenizers_app.sub.leaf"},
                     "tokenizers_app.sub.leaf": {"tokenizers_app.top"},
                     "tokenizers_app.top": {"tokenizers_app.sub", "tokenizers_app.sub.leaf"}}
    assert cycles(edges) == [["tokenizers_app.sub", "tokenizers_app.sub.leaf",
                              "tokenizers_app.top"]]


def test_the_services_send_tasks_the_worker_registers():
    """The names in ``services/queue.py`` are tasks of ``tasks.py`` (a wrong name would be sent
    and never run)."""
    from tokenizers_app.services import queue

    names = {value for key, value in vars(queue).items()
             if key.isupper() and isinstance(value, str) and value.startswith("tokenizers_app.")}
    assert len(names) == 6
    for name in names:
        assert queue.registered_task(name).name == name


def test_every_module_reads_in_a_few_minutes():
    """No module of the app over 300 lines; no workflow module (``services/``) over 200."""
    app = REPO / "tokenizers_app"
    sizes = {path.relative_to(REPO): len(path.read_text().splitlines())
             for path in app.rglob("*.py") if "migrations" not in path.parts}
    assert {path: n for path, n in sizes.items() if n > 300} == {}
    assert {path: n for path, n in sizes.items()
            if path.parts[1] == "services" and n > 200} == {}


# what measurement history reads like: "2.5x slower", "two to three times faster", "in about
# 40 ms", "a quarter of the time", "some 20 MB each"
TIMING = re.compile(r"\b\d+(\.\d+)?x (faster|slower)|times (faster|slower)|in about [\d.]+ ?m?s\b"
                    r"|took about|an? (tenth|quarter|third) (less|faster|of (the|its) time)"
                    r"|\d+ MB each")


def test_measurements_are_kept_in_bench_not_in_the_code():
    """Timings age with every machine: bench/HISTORY.md keeps them, the code says why."""
    quoted = [f"{path.relative_to(REPO)}:{n}" for path in sorted(APP.rglob("*"))
              if path.suffix in (".py", ".pyx", ".pxi") and "migrations" not in path.parts
              for n, line in enumerate(path.read_text().splitlines(), 1) if TIMING.search(line)]
    assert quoted == []
    assert (REPO / "bench" / "HISTORY.md").is_file()
