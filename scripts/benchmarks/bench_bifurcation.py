"""Wall time of a 1,000-value bifurcation diagram with the largest Lyapunov exponent at each value.

Paper 002's disc (h = eps = 1e-3): one batched (``vmap``) call for the stroboscopic samples and
one for the Lyapunov exponents over ``omega_dr`` in [0.02, 0.40]; 200 s transient, 100 samples
(~314 s) and a 300 s Lyapunov average per value. Speed is measured here, never in tests.
Usage: ``python scripts/benchmarks/bench_bifurcation.py [--n 1000]``.
"""

import argparse
import json
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from jaxfriction._reproduce.awrejcewicz import bifurcation_samples, disc_lyapunov  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    ws = np.linspace(0.02, 0.40, args.n)
    out = {"device": str(jax.devices()[0]), "n": args.n}
    for name, fn in (("bifurcation", bifurcation_samples), ("lyapunov", disc_lyapunov)):
        t = time.perf_counter()
        jax.block_until_ready(fn(ws))
        out[f"{name}_seconds"] = round(time.perf_counter() - t, 1)
        print(name, out[f"{name}_seconds"], "s", flush=True)
    out["total_seconds"] = round(out["bifurcation_seconds"] + out["lyapunov_seconds"], 1)
    print(json.dumps(out))
