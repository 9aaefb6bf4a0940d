"""Malformed inputs, as a new user and a hostile tester would give them, and how each is answered.

Every case states what a serious library must do with it: raise an error that names the
argument (``error``: ValueError or FileNotFoundError whose message contains the word; on the
command line one ``Error:`` line containing it and exit status 1), flag a lane (``status``),
or simply work (``ok``). Each answer is classified as

- ``clear``: what the case asks for;
- ``vague``: an error of the right kind that does not name the argument, or a valid input
  refused;
- ``traceback``: another exception (on the command line: a traceback, or several lines);
- ``silent``: no error and no flag where one was due (a wrong number printed or returned).

Usage: ``python scripts/studies/hostile_inputs.py [--baseline REV]`` runs the corpus against this tree
and, with ``--baseline``, against that revision (a temporary git worktree) in a fresh process,
and prints the counts side by side. Needs the shared data folder for the record cases (they
are skipped without it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CORPUS = r'''
import contextlib, io, json, math, os, sys, tempfile, traceback
from pathlib import Path
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, numpy as np
import jaxfriction as jf
from click.testing import CliRunner
from jaxfriction.cli import main

TMP = Path(tempfile.mkdtemp())
DATA = Path(sys.argv[2]) if len(sys.argv) > 2 else None
OSC = jf.Oscillator(law=jf.Quinn(1.0, 0.02), force=jf.Harmonic(1.2, 0.5))
RESULTS = []


def case(name, expect, word=None):
    def wrap(fn):
        RESULTS.append((name, expect, word, fn))
        return fn
    return wrap


def classify(expect, word, fn):
    try:
        out = fn()
    except (ValueError, FileNotFoundError) as exc:
        if expect != "error":
            return "vague", f"refused: {exc}"[:200]
        return ("clear" if word.lower() in str(exc).lower() else "vague"), str(exc)[:200]
    except Exception as exc:  # noqa: BLE001
        return "traceback", f"{type(exc).__name__}: {exc}"[:200]
    if expect == "error":
        return "silent", repr(out)[:200]
    if expect == "warns":  # runs, and says so: the output names the word
        return ("clear" if word.lower() in str(out).lower() else "silent"), str(out)[:200]
    if expect == "status":
        code = int(np.max(np.asarray(out)))
        return ("clear" if code == word else "silent" if code == 0 else "vague"), f"status {code}"
    if expect == "close":
        got, want = out
        return ("clear" if np.allclose(got, want, rtol=1e-5) else "silent"), f"{got} vs {want}"
    return "clear", "ok"


def cli(*args, word=None):
    def run():
        result = CliRunner().invoke(main, [str(a) for a in args])
        lines = [line for line in result.output.splitlines() if line.strip()]
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise RuntimeError(f"traceback: {type(result.exception).__name__}: {result.exception}")
        if result.exit_code == 0:
            return result.output
        if len(lines) != 1 or not lines[0].startswith("Error:"):
            raise RuntimeError("not one Error: line: " + result.output[-200:])
        raise ValueError(lines[0])
    return run


# ---- laws, drives, systems
case("Quinn(mu=-1)", "error", "mu")(lambda: jf.Quinn(mu=-1.0))
case("Quinn(mu='0.5')", "error", "mu")(lambda: jf.Quinn(mu="0.5"))
case("Quinn(mu=None)", "error", "mu")(lambda: jf.Quinn(mu=None))
case("Quinn(eps=0)", "error", "eps")(lambda: jf.Quinn(eps=0.0))
case("Quinn(eps=nan)", "error", "eps")(lambda: jf.Quinn(eps=float("nan")))
case("StaticKineticCoulomb(mu_k > mu_s)", "error", "mu_k")(lambda: jf.StaticKineticCoulomb(0.3, 0.5))
case("Harmonic(amplitude=inf)", "error", "amplitude")(lambda: jf.Harmonic(amplitude=float("inf")))
case("Oscillator(vector law)", "error", "law")(lambda: jf.Oscillator(law=jf.VectorQuinn()))
case("BlockOnShakingFloor(scalar law)", "error", "law")(
    lambda: jf.BlockOnShakingFloor(law=jf.Quinn(), ground=jf.Constant(jnp.zeros(2))))
case("Oscillator(mass=0)", "error", "mass")(lambda: jf.Oscillator(law=jf.Quinn(), mass=0.0))
case("Oscillator(force=3.0)", "error", "force")(lambda: jf.Oscillator(law=jf.Quinn(), force=3.0))
case("GroundMotion(values with NaN)", "error", "values")(
    lambda: jf.GroundMotion(values=jnp.array([[0.0, 0.0], [jnp.nan, 0.0]]), dt=0.01))
case("VectorQuinn d/dmu at mu = 0", "close")(lambda: (
    np.asarray(jax.jacfwd(lambda m: jf.vector_quinn(jnp.array([3e-3, -1e-3]), jnp.array([0.4, 0.9]), 2.0, m, 0.01))(
        0.0)),
    np.asarray((jf.vector_quinn(jnp.array([3e-3, -1e-3]), jnp.array([0.4, 0.9]), 2.0, 1e-9, 0.01)
                - jf.vector_quinn(jnp.array([3e-3, -1e-3]), jnp.array([0.4, 0.9]), 2.0, 0.0, 0.01)) / 1e-9)))
case("belt_limit_cycle(mu_s = mu_k)", "ok")(lambda: jf.belt_limit_cycle(0.2, 0.6, 0.6))
case("SegalmanIwan(n_elements=0)", "error", "n_elements")(lambda: jf.SegalmanIwan(n_elements=0))
case("SegalmanIwan(n_elements=-5)", "error", "n_elements")(lambda: jf.SegalmanIwan(n_elements=-5))
case("SegalmanIwan(n_elements=2.5)", "error", "n_elements")(lambda: jf.SegalmanIwan(n_elements=2.5))
case("SegalmanIwan(n_elements='10')", "error", "n_elements")(lambda: jf.SegalmanIwan(n_elements="10"))
case("SegalmanIwan(chi='10')", "error", "chi")(lambda: jf.SegalmanIwan(chi="10"))
case("SegalmanIwan(beta=[1, 2])", "error", "beta")(lambda: jf.SegalmanIwan(beta=[1.0, 2.0]))
case("Oscillator(Quinn(mu=array))", "error", "law")(
    lambda: jf.Oscillator(law=jf.Quinn(mu=jnp.array([0.5, 0.3]))))
case("SpringSlider(Quinn(mu=list))", "error", "law")(lambda: jf.SpringSlider(law=jf.Quinn(mu=[0.5, 0.3])))
case("Diffrax(max_steps=0)", "error", "max_steps")(lambda: jf.Diffrax(jf.ClassicRK4(), max_steps=0))
case("EventDriven(max_steps=0)", "error", "max_steps")(lambda: jf.EventDriven(max_steps=0))

# ---- simulate
case("simulate dt=0", "error", "dt")(lambda: jf.simulate(OSC, jnp.zeros(2), 0.0, 1.0, 0.0))
case("simulate dt=-1", "error", "dt")(lambda: jf.simulate(OSC, jnp.zeros(2), 0.0, 1.0, -1.0))
case("simulate t1 < t0", "error", "t1")(lambda: jf.simulate(OSC, jnp.zeros(2), 1.0, 0.0, 0.01))
case("simulate t0='0'", "error", "t0")(lambda: jf.simulate(OSC, jnp.zeros(2), "0", 1.0, 0.01))
case("simulate y0 of shape (3,)", "error", "y0")(lambda: jf.simulate(OSC, jnp.zeros(3), 0.0, 1.0, 0.01))
case("simulate y0 with NaN", "error", "y0")(lambda: jf.simulate(OSC, jnp.array([jnp.nan, 0.0]), 0.0, 1.0, 0.01))
case("simulate solver='euler'", "error", "solver")(
    lambda: jf.simulate(OSC, jnp.zeros(2), 0.0, 1.0, 0.01, solver="euler"))
case("simulate 6e10 saved steps", "error", "dt")(lambda: jf.simulate(OSC, jnp.zeros(2), 0.0, 60.0, 1e-9))
case("simulate Moreau-Jean with Quinn's law", "error", "law")(
    lambda: jf.simulate(OSC, jnp.zeros(2), 0.0, 1.0, 0.01, solver=jf.MoreauJean()))
case("simulate y0='0,0'", "error", "y0")(lambda: jf.simulate(OSC, "0,0", 0.0, 1.0, 0.01))
case("simulate dt longer than the forcing period", "error", "dt")(
    lambda: jf.simulate(OSC, jnp.array([1.0, 0.0]), 0.0, 20.0, 25.0))
case("simulate 12.6 steps per forcing period", "error", "dt")(
    lambda: jf.simulate(OSC, jnp.zeros(2), 0.0, 100.0, 1.0))
case("simulate SaveAt(ts) beyond t1", "error", "saveat")(lambda: jf.simulate(
    OSC, jnp.zeros(2), 0.0, 1.0, 0.01, solver=jf.Diffrax(__import__("diffrax").Tsit5()),
    saveat=jf.SaveAt(ts=jnp.array([0.5, 2.0]))))
case("simulate SaveAt(ts) before t0", "error", "saveat")(lambda: jf.simulate(
    OSC, jnp.zeros(2), 0.0, 1.0, 0.01, solver=jf.Diffrax(__import__("diffrax").Tsit5()),
    saveat=jf.SaveAt(ts=jnp.array([-1.0, 0.5]))))
FLOOR = jf.GroundMotion(values=jnp.zeros((200, 2)).at[50, 0].set(3.0), dt=0.01, name="pulse")
case("quake_response dt over the record's samples", "error", "dt")(
    lambda: jf.quake_response(FLOOR, dt=0.05, method="na-eltawil", tail=0.5))
case("quake_response eps with moreau-jean", "error", "eps")(
    lambda: jf.quake_response(FLOOR, eps=0.1, method="moreau-jean", tail=0.5))

# ---- paths and templates
case("set_parameters unknown path", "error", "law.nu")(lambda: jf.set_parameters(OSC, {"law.nu": 1.0}))
case("set_parameters element twice", "error", "twice")(
    lambda: jf.set_parameters(jf.TwoBlocksOnBelt(law=jf.Quinn(jnp.array([0.5, 0.25]), 0.02)),
                              {"law.mu[-1]": 1.0, "law.mu[1]": 2.0}))
case("template('nope')", "error", "system")(lambda: jf.template("nope"))
case("template(dt=-1)", "error", "dt")(lambda: jf.template("oscillator", dt=-1.0))
case("set_parameters scalar as array", "error", "law.mu")(
    lambda: jf.set_parameters(OSC, {"law.mu": jnp.array([0.5, 0.3])}))
case("set_parameters string", "error", "law.mu")(lambda: jf.set_parameters(OSC, {"law.mu": "0.5"}))
case("Template.with_parameters law.eps=-1", "error", "eps")(
    lambda: jf.template("oscillator").with_parameters({"law.eps": -1.0}))
for _name, _text in {"raises": "raise RuntimeError('boom')\n", "syntax": "def f(:\n",
                     "needs": "def make(n, m):\n    return None\n"}.items():
    (TMP / f"tpl_{_name}.py").write_text(_text)
load_template = __import__("jaxfriction._templates", fromlist=["load_template"]).load_template
case("load_template: module raises RuntimeError", "error", "tpl_raises.py")(
    lambda: load_template(f"{TMP / 'tpl_raises.py'}:x"))
case("load_template: module with SyntaxError", "error", "tpl_syntax.py")(
    lambda: load_template(f"{TMP / 'tpl_syntax.py'}:x"))
case("load_template: function needing arguments", "error", "tpl_needs.py")(
    lambda: load_template(f"{TMP / 'tpl_needs.py'}:make"))
case("load_template: a builtin", "error", "builtins:len")(lambda: load_template("builtins:len"))
case("finite_difference_gradient(rel_step=0)", "error", "rel_step")(
    lambda: jf.finite_difference_gradient(lambda s: s.law.mu ** 2, OSC, ["law.mu"], rel_step=0.0))
case("sensitivity of a non-scalar observable", "error", "observable")(
    lambda: jf.sensitivity(lambda s: jnp.stack([s.law.mu, s.law.eps]), OSC, ["law.mu"]))

# ---- sweep
SW = {"cycles": 2, "progress": False}
case("sweep unknown path", "error", "law.nu")(lambda: jf.sweep(jf.template("oscillator"), {"law.nu": [1.0]}, **SW))
case("sweep NaN in the grid", "error", "grid")(lambda: jf.sweep(jf.template("oscillator"), {"law.mu": [np.nan]}, **SW))
case("sweep empty grid", "error", "grid")(lambda: jf.sweep(jf.template("oscillator"), {}, **SW))
case("sweep wrt unknown", "error", "wrt")(
    lambda: jf.sweep(jf.template("oscillator"), {"law.mu": [0.5]}, wrt=["law.nu"], **SW))
case("sweep gradient='sideways'", "error", "gradient")(
    lambda: jf.sweep(jf.template("oscillator"), {"law.mu": [0.5]}, wrt=["law.mu"], gradient="sideways", **SW))
case("sweep swept frequency with cycles", "error", "frequency")(
    lambda: jf.sweep(jf.template("oscillator"), {"force.omega": [0.5]}, **SW))
case("sweep wrt the frequency with cycles", "error", "wrt")(
    lambda: jf.sweep(jf.template("oscillator"), {"law.mu": [0.5]}, wrt=["force.omega"], **SW))
case("sweep a negative mu lane", "status", 4)(
    lambda: jf.sweep(jf.template("oscillator"), {"law.mu": [-0.5]}, **SW)["status"].values)
case("sweep devices=0", "error", "devices")(
    lambda: jf.sweep(jf.template("oscillator"), {"law.mu": [0.5]}, devices=0, **SW))
case("sweep 10^12 lanes", "error", "grid")(lambda: jf.sweep(
    jf.template("oscillator"), {"law.mu": np.linspace(0, 1, 10**6), "force.amplitude": np.linspace(0, 1, 10**6)}, **SW))
case("sweep dt longer than the run (t1 2, window 1, dt 5)", "error", "dt")(
    lambda: jf.sweep(jf.template("oscillator"), {"law.mu": [0.5]}, t1=2.0, window=1.0, dt=5.0, progress=False))
case("sweep 6 steps per period of a swept omega", "error", "dt")(
    lambda: jf.sweep(jf.template("oscillator"), {"force.omega": [0.5, 100.0]}, t1=4.0, window=2.0, progress=False))
case("sweep an RK4-unstable band", "status", 5)(
    lambda: jf.sweep(OSC, {"law.eps": [0.01 / 2.9]}, t1=5.0, dt=0.01, progress=False)["status"].values)


def resume_other_grid():
    out = TMP / "resume"
    jf.sweep(jf.template("oscillator"), {"law.mu": [0.2, 0.4, 0.6, 0.8]}, chunk_size=2, out_dir=out, **SW)
    (out / "manifest.json").unlink()
    return jf.sweep(jf.template("oscillator"), {"law.mu": [0.3, 0.5, 0.7, 0.9]}, chunk_size=2, out_dir=out, **SW)


def swapped_chunks():
    out = TMP / "swap"
    jf.sweep(jf.template("oscillator"), {"law.mu": [0.2, 0.4, 0.6, 0.8]}, chunk_size=2, out_dir=out, **SW)
    a, b = out / "chunk_000000.npz", out / "chunk_000001.npz"
    a.rename(out / "x"), b.rename(a), (out / "x").rename(b)
    return jf.sweep(jf.template("oscillator"), {"law.mu": [0.2, 0.4, 0.6, 0.8]}, chunk_size=2, out_dir=out, **SW)


case("sweep resumed with another grid, manifest deleted", "error", "chunk_000000")(resume_other_grid)
case("sweep with two chunk files swapped", "error", "chunk_000000")(swapped_chunks)

# ---- fit and measurements
REC = jf.Measurement(t=np.linspace(0, 1, 11), q=np.zeros(11), y0=[0.0, 0.0])
case("fit unknown path", "error", "law.nu")(lambda: jf.fit(OSC, {"law.nu": 1.0}, REC))
case("fit initial NaN", "error", "initial")(lambda: jf.fit(OSC, {"law.mu": float("nan")}, REC))
case("fit optimizer='sgd'", "error", "optimizer")(lambda: jf.fit(OSC, {"law.mu": 1.0}, REC, optimizer="sgd"))
case("Measurement non-uniform t", "error", "t must be")(lambda: jf.Measurement(t=[0.0, 0.1, 0.3], q=[0, 0, 0]))
case("Measurement q with NaN", "error", "q must be finite")(
    lambda: jf.Measurement(t=[0.0, 0.1, 0.2], q=[0, np.nan, 0]))


def junk_csv():
    path = TMP / "junk.csv"
    path.write_bytes(bytes(range(256)) * 4)
    return jf.load_measurement(path)


def bad_header_csv():
    path = TMP / "bad.csv"
    path.write_text("time,q\n0,1\n")
    return jf.load_measurement(path)


case("load_measurement binary junk", "error", "junk.csv")(junk_csv)
case("load_measurement bad header", "error", "bad.csv:1")(bad_header_csv)

# ---- ground motions
case("load_ground_motion a directory", "error", str(TMP))(lambda: jf.load_ground_motion(TMP))


def junk_record():
    path = TMP / "junk.txt"
    path.write_bytes(bytes(range(256)) * 4)
    return jf.load_ground_motion(path)


def at2_dt_zero():
    path = TMP / "zero.AT2"
    path.write_text("PEER\nrecord\nACCELERATION TIME SERIES IN UNITS OF G\nNPTS=  4, DT=   .0000 SEC\n"
                    "0.1 0.2 0.3 0.4\n")
    return jf.load_ground_motion(path)


case("load_ground_motion binary junk", "error", "junk.txt")(junk_record)
case("AT2 with DT = 0", "error", "zero.AT2")(at2_dt_zero)

# ---- command line
TOML = TMP / "c.toml"


def toml(text):
    TOML.write_text(text)
    return TOML


(TMP / "file").write_text("")


class _Out:
    """``--out`` to a fresh folder for every case (a case that runs must not block the next)."""

    count = 0

    def __iter__(self):
        _Out.count += 1
        return iter(["--out", TMP / f"cli-out-{_Out.count}", "--no-progress"])


OUT = _Out()
case("sweep --param law.mu=1:0:3", "error", "law.mu")(cli("sweep", "--param", "law.mu=1:0:3", *OUT))
case("sweep --dt -1", "error", "dt")(cli("sweep", "--dt", "-1", *OUT))
case("sweep --out FILE", "error", "--out")(cli("sweep", "--out", TMP / "file", "--no-progress"))
case("sweep --figure in a file", "error", "--figure")(cli("sweep", "--figure", TMP / "file" / "f.png", *OUT))
case("sweep --set force.omega=fast", "error", "force.omega")(cli("sweep", "--set", "force.omega=fast", *OUT))
case("sweep --system no_module:x", "error", "no_module")(cli("sweep", "--system", "no_module:x", *OUT))
case("sweep TOML cycles = '50'", "error", "cycles")(lambda: cli("sweep", "--config", toml('cycles = "50"\n'), *OUT)())
case("sweep TOML set string", "error", "law.mu")(
    lambda: cli("sweep", "--config", toml('[set]\n"law.mu" = "0.5"\n'), *OUT)())
case("sweep TOML param = 3", "error", "param")(lambda: cli("sweep", "--config", toml("param = 3\n"), *OUT)())
case("sweep --t1 2 --window 1 --dt 5", "error", "dt")(cli("sweep", "--t1", "2", "--window", "1", "--dt", "5", *OUT))
case("sweep --system file raising RuntimeError", "error", "tpl_raises.py")(
    cli("sweep", "--system", f"{TMP / 'tpl_raises.py'}:x", *OUT))
case("sweep --system file with SyntaxError", "error", "tpl_syntax.py")(
    cli("sweep", "--system", f"{TMP / 'tpl_syntax.py'}:x", *OUT))
case("sweep --system function needing arguments", "error", "tpl_needs.py")(
    cli("sweep", "--system", f"{TMP / 'tpl_needs.py'}:make", *OUT))
case("sweep --system builtins:len", "error", "builtins:len")(cli("sweep", "--system", "builtins:len", *OUT))
case("sweep --figure f.xyz", "error", "--figure")(cli("sweep", "--figure", TMP / "f.xyz", *OUT))
case("sweep --figure an existing folder", "error", "--figure")(cli("sweep", "--figure", TMP, *OUT))
case("sweep --config not UTF-8", "error", "bad.toml")(
    lambda: ((TMP / "bad.toml").write_bytes(b'cycles = 2\nsystem = "\xff\xfe"\n'),
             cli("sweep", "--config", TMP / "bad.toml", *OUT)())[1])
case("sweep TOML precision = 'float16'", "error", "precision")(
    lambda: cli("sweep", "--config", toml('precision = "float16"\n'), *OUT)())
case("sweep --set law.eps=-1 (fixed, invalid)", "error", "eps")(cli("sweep", "--set", "law.eps=-1", *OUT))
case("sweep 10^12 lanes", "error", "grid")(
    cli("sweep", "--param", "law.mu=0:1:1000000", "--param", "force.amplitude=0:1:1000000", *OUT))
case("sweep --param N = 10^12 on one axis", "error", "law.mu")(
    cli("sweep", "--param", "law.mu=0:1:1000000000000", *OUT))
case("sweep --devices 1000", "warns", "--devices")(
    cli("sweep", "--devices", "1000", "--param", "law.mu=0.5", "--cycles", "2", *OUT))
case("reproduce quinn-fig5 --figure a folder", "error", "--figure")(cli("reproduce", "quinn-fig5", "--figure", TMP))
case("fit CSV with q1 for a 1-dof system, --y0 given", "error", "column")(
    lambda: ((TMP / "twodof.csv").write_text("t,q0,q1\n0,0,0\n0.1,0.01,0.02\n0.2,0.02,0.03\n0.3,0.03,0.03\n"),
             cli("fit", TMP / "twodof.csv", "--system", "oscillator", "--params", "law.mu", "--y0", "0,0")())[1])
case("fit --params law.mu_x", "error", "law.mu_x")(lambda: (REC.to_csv(TMP / "r.csv"), cli(
    "fit", TMP / "r.csv", "--system", "oscillator", "--params", "law.mu_x")())[1])
case("fit --y0 0", "error", "y0")(lambda: (REC.to_csv(TMP / "r.csv"), cli(
    "fit", TMP / "r.csv", "--system", "oscillator", "--params", "law.mu", "--y0", "0")())[1])
if DATA is not None and (DATA / "kobe.txt").exists():
    kobe = DATA / "kobe.txt"
    case("quake --scale nan", "error", "--scale")(cli("quake", kobe, "--scale", "nan", "--figure", TMP / "q.png"))
    case("quake --rotation inf", "error", "--rotation")(
        cli("quake", kobe, "--rotation", "inf", "--figure", TMP / "q.png"))
    case("quake a directory", "error", str(TMP))(cli("quake", TMP, "--figure", TMP / "q.png"))
    case("quake --dt 1e-9", "error", "dt")(cli("quake", kobe, "--dt", "1e-9", "--figure", TMP / "q.png"))
    case("quake --figure in a file", "error", "--figure")(cli("quake", kobe, "--figure", TMP / "file" / "q.png"))

    def one_at2():
        values = np.loadtxt(kobe, comments="%")[:2000, 0] / 980.665
        path = TMP / "kobe_x.AT2"
        rows = "\n".join(" ".join(f"{v:.7E}" for v in values[i:i + 5]) for i in range(0, values.size, 5))
        path.write_text(f"PEER\nkobe x\nACCELERATION TIME SERIES IN UNITS OF G\nNPTS= {values.size}, DT= .0050 SEC\n"
                        f"{rows}\n")
        return cli("quake", path, "--dt", "2e-3", "--figure", TMP / "q.png")()

    case("quake --dt 100", "error", "dt")(cli("quake", kobe, "--dt", "100", "--figure", TMP / "q.png"))
    case("quake --method na-eltawil --dt 0.5", "error", "dt")(
        cli("quake", kobe, "--method", "na-eltawil", "--dt", "0.5", "--figure", TMP / "q.png"))
    case("quake --eps with --method moreau-jean", "error", "--eps")(
        cli("quake", kobe, "--eps", "0.1", "--method", "moreau-jean", "--figure", TMP / "q.png"))
    case("quake --figure q.xyz", "error", "--figure")(cli("quake", kobe, "--figure", TMP / "q.xyz"))
    case("quake one .AT2 component", "ok")(one_at2)
    case("quake --mu 0", "ok")(cli("quake", kobe, "--mu", "0", "--dt", "2e-3", "--figure", TMP / "q.png"))

out = []
for name, expect, word, fn in RESULTS:
    with contextlib.redirect_stderr(io.StringIO()):
        kind, detail = classify(expect, word, fn)
    out.append({"case": name, "kind": kind, "detail": detail})
print(json.dumps(out))
'''


def run(root, data):
    args = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); exec(sys.argv[3])", str(root),
            str(data or ""), CORPUS]
    done = subprocess.run(args, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=None, help="git revision to compare with")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "ground_motions"))
    parser.add_argument("--json", default=None, help="write every case's answer here")
    args = parser.parse_args()
    data = Path(args.data) if Path(args.data).is_dir() else None
    results = {"this tree": run(ROOT, data)}
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp) / "baseline"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline],
                           check=True, capture_output=True)
            try:
                results[args.baseline] = run(base, data)
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                               capture_output=True)
    kinds = ("clear", "vague", "traceback", "silent")
    print(f"{len(results['this tree'])} malformed or borderline inputs")
    print("| revision | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for name, rows in results.items():
        print(f"| {name} | " + " | ".join(str(sum(r["kind"] == k for r in rows)) for k in kinds) + " |")
    for name, rows in results.items():
        bad = [r for r in rows if r["kind"] != "clear"]
        if bad:
            print(f"\n{name}: not clear")
            for r in bad:
                print(f"- {r['case']}: {r['kind']}: {r['detail']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
