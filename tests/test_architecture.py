"""The import arrows: the import-linter contracts in pyproject.toml hold, and no module of the app
reaches itself again through its imports (imports inside functions count too)."""

import subprocess
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parent.parent
# the one arrow that points back up: a task body imports its service
ALLOWED_BACK_ARROWS = [("tokenizers_app.tasks", "tokenizers_app.services.")]


def test_the_import_linter_contracts_hold():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint_imports)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def import_graph() -> dict[str, set[str]]:
    """Module -> the app's modules it imports (at the top or inside functions)."""
    graph = grimp.build_graph("tokenizers_app", cache_dir=None)
    edges = {module: set(graph.find_modules_directly_imported_by(module))
             for module in graph.modules}
    for source, prefix in ALLOWED_BACK_ARROWS:
        edges[source] = {m for m in edges[source] if not m.startswith(prefix)}
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


def test_every_module_reads_in_a_few_minutes():
    """No module of the app over 300 lines; no workflow module (``services/``) over 200."""
    app = REPO / "tokenizers_app"
    sizes = {path.relative_to(REPO): len(path.read_text().splitlines())
             for path in app.rglob("*.py") if "migrations" not in path.parts}
    assert {path: n for path, n in sizes.items() if n > 300} == {}
    assert {path: n for path, n in sizes.items()
            if path.parts[1] == "services" and n > 200} == {}
