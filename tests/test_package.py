"""The package's architecture: a lazy import, a core that never imports the workflows, one flat namespace."""

import ast
import graphlib
import re
import subprocess
import sys
from pathlib import Path

import jaxfriction as jf

PACKAGE = Path(jf.__file__).parent
CORE = ("_laws", "_systems", "_integrate", "_exact", "_observables", "_dynamics", "_reference", "_forcing")
HEAVY = {"xarray", "tqdm", "optax", "optimistix", "diffrax", "lineax", "matplotlib", "click", "scipy"}


def test_import_loads_nothing_and_a_core_name_loads_the_core_only():
    # `import jaxfriction` loads no dependency at all (the command line's --help relies on it)
    code = "import sys, jaxfriction; print(sorted({m.split('.')[0] for m in sys.modules} & {'jax', 'numpy', 'equinox'}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    # a core name loads JAX and the core, none of the workflows' dependencies
    code = (f"import sys, jaxfriction as jf; jf.simulate; jf.Quinn; jf.template; "
            f"print('jax' in sys.modules, sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True []", out.stdout
    # the workflows load on first use
    code = "import sys, jaxfriction as jf; jf.sweep; print('xarray' in sys.modules, 'diffrax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_the_core_never_imports_the_workflows():
    for folder in CORE:
        for path in (PACKAGE / folder).rglob("*.py"):
            text = path.read_text()
            assert not re.search(r"_workflows|_applications|_lanes|\bcli\b", text), path
    for path in (PACKAGE / "_lanes").rglob("*.py"):  # the lanes sit between the core and the workflows
        assert not re.search(r"import .*_workflows|_workflows.* import|_applications|\bcli\b", path.read_text()), path


def test_flat_public_namespace():
    names = set(jf.__all__)
    assert {"sweep", "fit", "sensitivity", "sensitivity_map", "Template", "template", "Oscillator", "SaveAt", "RK4",
            "MoreauJean", "EventDriven", "ForwardMode", "ReverseMode", "AutoMode", "parameter_paths"} <= names
    for name in jf.__all__:
        assert getattr(jf, name) is not None, name
    assert not [n for n in jf.__all__ if n.startswith("_")]
    gone = {"ForcedOscillator", "SystemSpec", "SweepConfig", "FIT_SYSTEMS", "system_sweep", "dissipation_sweep",
            "batch_dissipation", "run_sweep", "simulate_moreau_jean"}
    assert not gone & set(dir(jf))


def test_every_name_of_the_gathering_modules_is_exported():
    # the lazy namespace lists names one by one: a law or observable added to its package's
    # __all__ must also be added to jaxfriction._EXPORTS
    import jaxfriction._laws as laws
    import jaxfriction._observables as observables

    for module in (laws, observables):
        assert set(module.__all__) <= set(jf.__all__), set(module.__all__) - set(jf.__all__)
    assert set(dir(jf)) >= set(jf.__all__) and len(jf.__all__) == len(set(jf.__all__))
    namespace = {}
    exec("from jaxfriction import *", namespace)
    assert {n for n in namespace if not n.startswith("__")} == set(jf.__all__)


def test_the_version_is_the_one_of_pyproject():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert jf.__version__ == pyproject["project"]["version"]


# --- folders import each other in one direction only ------------------------------------------
# A room is a top-level module or folder of the package, or a sub-folder of ``_workflows``
# (``_workflows/sweep``). Every import of a module of the package counts, a function-local one
# too (it hides a circle from Python, not from the reader). ``__init__.py`` files (lazy
# re-exports) and the command line, which sits on top of all, are left out.


def room(parts: tuple[str, ...]) -> str:
    if len(parts) >= 3 and (PACKAGE / parts[0] / parts[1]).is_dir():
        return "/".join(parts[:2])
    return parts[0]


def targets(module: tuple[str, ...], node) -> list[tuple[str, ...]]:
    """Package-relative parts of the modules an import names (its longest existing prefix)."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = list(module[: len(module) - node.level])
        elif node.module and node.module.split(".")[0] == "jaxfriction":
            base = []
        else:
            return []
        stem = base + (node.module.split(".")[0 if node.level else 1:] if node.module else [])
        names = [stem + [a.name] for a in node.names]
    else:
        names = [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "jaxfriction"]
    found = []
    for n in names:
        for k in range(len(n), 0, -1):
            p = PACKAGE.joinpath(*n[:k])
            if p.with_suffix(".py").exists() or p.is_dir():
                found.append(tuple(n[:k]))
                break
    return found


def room_graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for f in PACKAGE.rglob("*.py"):
        rel = f.relative_to(PACKAGE).with_suffix("").parts
        if rel[-1] == "__init__" or rel[0] in ("_cli", "cli"):
            continue
        here = room(rel)
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in targets(rel[:-1] + ("_",), node):
                    if room(t) not in (here, "__init__"):
                        edges.setdefault(here, set()).add(room(t))
    return edges


def test_no_folder_level_import_circles():
    edges = room_graph()
    assert edges["_workflows/sweep"] >= {"_integrate", "_systems"}  # the graph is read at all
    try:
        order = list(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as e:
        raise AssertionError(f"import circle between folders: {' -> '.join(e.args[1])}") from None
    # the physics core stacks laws -> systems -> integrators -> exact solvers -> workflows
    assert order.index("_laws") < order.index("_systems") < order.index("_integrate") < order.index("_exact")
    assert order.index("_exact") < order.index("_workflows/sweep") < order.index("_workflows/fit")
    assert order.index("_integrate") < order.index("_lanes") < order.index("_workflows/sweep")
