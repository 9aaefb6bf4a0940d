"""The package's architecture: a light import, a core that never imports the workflows, one flat namespace."""

import re
import subprocess
import sys
from pathlib import Path

import jaxfriction as jf

PACKAGE = Path(jf.__file__).parent
CORE = ("_laws", "_systems", "_integrate", "_exact", "_observables", "_dynamics", "_reference", "_forcing")
HEAVY = {"xarray", "tqdm", "optax", "optimistix", "diffrax", "lineax", "matplotlib", "click", "scipy"}


def test_import_loads_the_core_only():
    code = f"import sys, jaxfriction; print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    # the workflows load on first use
    code = "import sys, jaxfriction as jf; jf.sweep; print('xarray' in sys.modules, 'diffrax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_the_core_never_imports_the_workflows():
    for folder in CORE:
        for path in (PACKAGE / folder).rglob("*.py"):
            text = path.read_text()
            assert not re.search(r"_workflows|_applications|\bcli\b", text), path


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
