"""The package's shape: imports inside ``symlayout/`` (at module level and inside functions) form no
loop, and run one way between the layers of the flow (config -> model -> obligations -> verdict)."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "symlayout"

#: layers, bottom first; a module may import its own layer and the ones below
LAYERS = [
    {"errors"},
    {"algebra"},
    {"arch"},
    {"atoms"},
    {"tiled"},
    {"threadmap"},
    {"config"},
    {"prove"},
    {"solve", "harness", "conformance", "sweep"},
    {"frontends"},
    {"cli", "api", "pytest_plugin", "__main__", "cute_dsl", "extract"},   # cute_dsl, extract: public names of frontends
]


def _modules() -> dict:
    mods = {}
    for f in PKG.rglob("*.py"):
        parts = ["symlayout"] + list(f.relative_to(PKG).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f
    return mods


def _imports(mods: dict) -> dict:
    """module -> the package's modules it imports (module level and inside functions)."""
    graph = {m: set() for m in mods}
    for m, f in mods.items():
        for n in ast.walk(ast.parse(f.read_text())):
            if isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    base = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
                    base = base[:len(base) - n.level + 1]
                else:
                    base = []
                mod = ".".join(base + ([n.module] if n.module else []))
                names = [mod] + [f"{mod}.{a.name}" for a in n.names]
            else:
                continue
            graph[m].update(x for x in names if x in mods and x != m and not m.startswith(x + "."))
    return graph


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in graph:
        if v not in index:
            visit(v)
    return out


def _layer(module: str) -> int | None:
    if module.endswith(".__main__"):                    # ``python -m`` entries sit with the command line
        return len(LAYERS) - 1
    top = module.split(".")[1] if "." in module else None
    for k, names in enumerate(LAYERS):
        if top in names:
            return k
    return None


def test_no_import_loop():
    assert _cycles(_imports(_modules())) == []


def test_a_loop_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_layers_import_downward():
    mods = _modules()
    assert all(_layer(m) is not None for m in mods if m != "symlayout"), \
        sorted(m for m in mods if m != "symlayout" and _layer(m) is None)
    upward = sorted((a, b) for a, bs in _imports(mods).items() if a != "symlayout"
                    for b in bs if _layer(b) is not None and _layer(b) > _layer(a))
    assert upward == []
