"""The package's modules import one way: low-level modules (_ffi, errors,
dtypes, buffers, request, groups, objects), then comm, then what is built
on a communicator (_world, sharded, smp, jax, torch). Every import of an
smd module counts, wherever it stands (inside a function or under
TYPE_CHECKING too), so a cycle cannot hide in a late import."""

import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "smd"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(package_dir: Path) -> dict:
    """{module: set of smd modules it imports}, from the source."""
    files = {module_name(p): p for p in sorted(package_dir.rglob("*.py"))}
    root = package_dir.name
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                # `from .x import y`: y is a module or a name in module x.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in files and t != name
                      and (t == root or t.startswith(root + "."))}
        graph[name] = edges
    return graph


def cycles(graph: dict) -> list:
    """One cycle (a list of modules, first repeated last) per module that
    closes one, found by depth-first search."""
    found, state = [], {}  # state: 1 on the current path, 2 done
    path = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_the_imports_it_judges():
    graph = import_graph(PACKAGE_DIR)
    assert "smd.groups" in graph["smd.comm"]        # from .groups import Groups
    assert "smd.comm" in graph["smd.torch.sharded_data_parallel"]  # from ..comm import Comm
    assert "smd.errors" in graph["smd.torch.errors"]  # from .. import errors


def test_the_package_imports_one_way():
    found = cycles(import_graph(PACKAGE_DIR))
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)
