"""Cost per RK4 step of the Burridge-Knopoff chain against n (Quinn's law, float64).

For each n, a batch of loads (alpha) is ``vmap``-ed over one ``jit``-ed RK4 run; the time
per trajectory-step should grow linearly with n (every operation of the chain is O(n):
spring forces by ``jax.grad`` of the potential, diagonal Delassus operator, no dense
Jacobian). Speed is measured here, never in tests. Usage:
``python scripts/benchmarks/bench_chain.py [--batch 8] [--steps 2000] [--ns 32 128 512 1024 2048]``.
"""

import argparse
import json
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--ns", type=int, nargs="+", default=[32, 128, 512, 1024, 2048])
    args = parser.parse_args()
    rows = []
    for n in args.ns:
        dt = min(0.01, 1.0 / n)  # dt = 0.01 is unstable for n >= 256 (the stiffest mode grows with n)

        def run(alpha, n=n, dt=dt):
            system = jf.BurridgeKnopoffChain(law=jf.Quinn(1.0, 10 * 0.5 * dt), n=n, alpha=alpha)  # eps = 10 omega dt
            return jf.simulate(system, jnp.zeros(2 * n), 0.0, args.steps * dt, dt, save_every=None).ys[-1]

        fn = jax.jit(jax.vmap(run))
        alphas = jnp.linspace(0.1, 0.9, args.batch)
        t = time.perf_counter()
        fn(alphas).block_until_ready()
        compile_s = time.perf_counter() - t
        times = []
        for _ in range(3):
            t = time.perf_counter()
            fn(alphas).block_until_ready()
            times.append(time.perf_counter() - t)
        per_step = float(np.median(times)) / (args.steps * args.batch)
        rows.append({"n": n, "us_per_trajectory_step": round(per_step * 1e6, 3),
                     "ns_per_block_step": round(per_step * 1e9 / n, 2), "compile_s": round(compile_s, 2)})
        print(rows[-1], flush=True)
    print(json.dumps({"device": str(jax.devices()[0]), "batch": args.batch, "rows": rows}, indent=1))
