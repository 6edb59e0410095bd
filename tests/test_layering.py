"""The engine's import graph, read from the source: no module imports itself through others (an
import inside a function counts; one under `if TYPE_CHECKING:` does not), and nothing in the
engine imports the pages or Streamlit."""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
ENGINE = PROJECT / "engine"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class Imports(ast.NodeVisitor):
    """The modules one source file imports, at any depth but under `if TYPE_CHECKING:`."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
        for child in node.orelse if name == "TYPE_CHECKING" else (*node.body, *node.orelse):
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        self.names += [alias.name for alias in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module is not None and node.level == 0:
            self.names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]


def import_graph(root: Path = ENGINE) -> dict[str, set[str]]:
    """Each engine module → the engine modules it imports (a name imported from a package is
    the package, or its submodule when there is one of that name) and the foreign top-level
    packages it imports, as themselves."""
    sources = {module_name(path): path for path in root.rglob("*.py")}
    graph = {}
    for module, path in sources.items():
        visitor = Imports()
        visitor.visit(ast.parse(path.read_text()))
        edges = set()
        for name in visitor.names:
            if name.split(".")[0] != "engine":
                edges.add(name.split(".")[0])
                continue
            while name not in sources:
                name = name.rsplit(".", 1)[0]
            edges.add(name)
        graph[module] = edges - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected set of more than one module (depth-first)."""
    found, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                found.append([*path[path.index(other) :], other])
            elif other in graph and other not in state:
                visit(other, [*path, other])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_the_cycle_finder_finds_a_lazy_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_engine_imports_no_module_through_itself():
    graph = import_graph()
    assert "engine.problem" in graph["engine.solvers.driver"]  # the graph is read at all
    assert cycles({m: {e for e in edges if e in graph} for m, edges in graph.items()}) == []


def test_nothing_in_the_engine_imports_the_pages_or_streamlit():
    upward = {m: edges & {"pages", "streamlit", "app"} for m, edges in import_graph().items()}
    assert {m: e for m, e in upward.items() if e} == {}


def solver_source(module: str) -> str | None:
    """The source of algorithms (a package of engine.solvers: paper003, fairlearn, …) a module
    belongs to, None for a shared module of engine.solvers or any other module."""
    parts = module.split(".")
    if parts[:2] != ["engine", "solvers"] or len(parts) < 3:
        return None
    return parts[2] if (ENGINE / "solvers" / parts[2] / "__init__.py").exists() else None


def test_a_source_of_solvers_imports_no_other_but_the_reference():
    """A source's package imports the shared modules and its own; those whose solvers train an
    unconstrained model first also import the reference. Nothing else in the engine imports a
    source (the catalogue finds their cards by name), and a card module imports cards only."""
    graph = import_graph()
    assert solver_source("engine.solvers.paper003.idca") == "paper003"  # the sources are found
    crossing = {
        (module, edge)
        for module, edges in graph.items()
        for edge in edges
        if solver_source(edge) not in (None, solver_source(module), "reference")
        or (solver_source(edge) == "reference" and solver_source(module) is None)
    }
    assert crossing == set()
    card_modules = [m for m in graph if m.rsplit(".", 1)[-1].split("_")[0] == "cards"]
    assert {solver_source(m) for m in card_modules} == {solver_source(m) for m in graph} - {None}
    implementations = {
        (module, edge)
        for module in card_modules
        for edge in graph[module]
        if solver_source(edge) is not None and edge.rsplit(".", 1)[-1].split("_")[0] != "cards"
    }
    assert implementations == set()
