"""Wall time of the bounds-only fit of one rate-and-state velocity step, screened and not.

The record: rsfmodel's velocity step (1 -> 10 um/s at 10 s, 40 s at 10 Hz, aging law, a =
0.005, b = 0.01, D_c = 10 um, k = 1e-3 /um, mu_0 = 0.6), by scipy's Radau on the
quasi-static equations written out here (rtol 1e-12), plus Gaussian noise of 1e-4. The fit:
``jf.fit(slider, None, record, bounds=BOX)``, (a, b, D_c, k) from a box a decade wide each
(so a large part of the design is unstable, k < k_c, and oscillates), with the default
:class:`~jaxfriction.GlobalSearch` (its loose-tolerance screen of the design, then the
adaptive polish) and with ``GlobalSearch(screen_rtol=None)`` (every candidate an adaptive solve at
the system's own tolerance, the search before issue 35). Both run in this one process, so
their ratio is measured under the same load; the first fit of each variant includes
compiling, so each is run ``--repeats`` times (default 2) and every time is printed, wall and
CPU (``time.process_time``, all threads of this process: the fair measure on a shared machine).

Usage: ``python scripts/benchmarks/bench_rate_state_fit.py [--repeats 2] [--variants screened,unscreened]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np

# the independent Radau reference lives with the studies (scripts/studies/)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "studies"))
from identification_problems import radau_friction

import jaxfriction as jf

TRUTH = {"law.a": 0.005, "law.b": 0.01, "law.D_c": 10.0, "stiffness": 1e-3}
BOX = {"law.a": (0.002, 0.02), "law.b": (0.004, 0.04), "law.D_c": (3.0, 30.0), "stiffness": (3e-4, 3e-3)}
NOISE = 1e-4


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--variants", default="screened,unscreened")
    args = parser.parse_args()
    ts = np.linspace(0.0, 40.0, 401)
    mu = radau_friction(ts) + NOISE * np.random.default_rng(0).standard_normal(ts.size)
    law = jf.RateState(a=0.005, b=0.01, D_c=10.0, mu_0=0.6, V_0=1.0, evolution="aging", form="log")
    slider = jf.QuasiStaticSlider(law=law, load=jf.Steps((1.0, 10.0), (10.0,)), stiffness=1e-3, normal=1.0)
    record = jf.Measurement(t=ts, channels={"mu": mu}, y0=np.asarray(slider.steady_sliding()))
    searches = {"screened": jf.GlobalSearch(), "unscreened": jf.GlobalSearch(screen_rtol=None)}
    print(f"jax {jax.__version__}, devices {jax.devices()}")
    print(f"box: {BOX}")
    best, best_cpu = {}, {}
    for name in args.variants.split(","):
        for repeat in range(args.repeats):
            started, cpu = time.perf_counter(), time.process_time()
            result = jf.fit(slider, None, record, bounds=BOX, search=searches[name])
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            best[name] = min(best.get(name, np.inf), seconds)
            best_cpu[name] = min(best_cpu.get(name, np.inf), cpu)
            est = ", ".join(f"{k.split('.')[-1]} {result.params[k]:.6g} +- {result.stderr[k]:.2g}" for k in TRUTH)
            screen = (result.search or {}).get("screen")
            print(f"{name:10s} run {repeat}: {seconds:7.1f} s wall {cpu:7.1f} s cpu  loss {result.loss_history[-1]:.4g}  {est}")
            print(f"{'':10s}        design {(result.search or {}).get('candidates')} candidates, "
                  f"{(result.search or {}).get('failed_candidates')} failed, screen {screen}")
    if len(best) == 2:
        print(f"best wall times: screened {best['screened']:.1f} s, unscreened {best['unscreened']:.1f} s, "
              f"ratio {best['unscreened'] / best['screened']:.1f}x")
        print(f"best cpu times: screened {best_cpu['screened']:.1f} s, unscreened {best_cpu['unscreened']:.1f} s, "
              f"ratio {best_cpu['unscreened'] / best_cpu['screened']:.1f}x")


if __name__ == "__main__":
    main()
