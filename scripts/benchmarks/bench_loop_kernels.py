"""What XLA's loop kernels and ``Sampled``'s O(1) lookup do to one fit evaluation on the EMPS record.

One process per XLA setting (``XLA_FLAGS`` is read once per process): with the option that
``import jaxfriction`` sets under ``JAXFRICTION_XLA_LOOP_KERNELS=1`` (``jaxfriction._xla_flags``)
and without it (XLA's default). In each, the forward run and the forward-mode Jacobian of the Coulomb +
viscous EMPS model (24,840 RK4 steps at 1 ms, driven by the measured ``vir``; one segment and
12 vmapped segments) and of the LuGre model (12 segments), with the sampled input's interval
found in O(1) and by binary search. Median of 5 warm calls, in ms; the compile time (the
first call less the median, ``timing.timed``) apart. Needs ``../shared/data/emps``.

Run from the repository root: ``python scripts/benchmarks/bench_loop_kernels.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from timing import timed


def measure() -> dict:
    import jax

    jax.config.update("jax_enable_x64", True)
    import equinox as eqx
    import jax.numpy as jnp

    import jaxfriction as jf

    est = jf.load_emps("DATA_EMPS")
    data = est.measurement()
    t0 = float(data.t[0])
    cv = jf.emps_model(jf.Quinn(mu=20.0, eps=1e-3), gtau=est.gtau, viscous=200.0)
    lugre = jf.emps_model(jf.LuGre(sigma0=1e4, sigma1=0.0, sigma2=200.0, mu_c=20.0, mu_s=25.0, v_s=0.01),
                          gtau=est.gtau)
    cases = [("cv", cv, ["mass", "damping", "law.mu", "force.terms[1].value"], [95.0, 200.0, 20.0, 0.0], 1),
             ("cv", cv, ["mass", "damping", "law.mu", "force.terms[1].value"], [95.0, 200.0, 20.0, 0.0], 12),
             ("lugre", lugre, ["mass", "law.sigma0", "law.sigma2", "law.mu_c", "law.mu_s", "force.terms[1].value"],
              [95.0, 1e4, 200.0, 20.0, 25.0, 0.0], 12)]
    out = {}
    for lookup in ("O(1)", "binary search"):
        for name, template, names, p, segments in cases:
            system = jf.with_inputs(template, {"force.terms[0]": (data.t, est.vir)})
            if lookup == "binary search":  # the static choice made on construction, overridden
                object.__setattr__(system.force.terms[0], "near_regular", False)
            y0 = system.initial_state(jnp.zeros(1), jnp.zeros(1), jnp.zeros(system.n_internal))
            length = (len(data.t) - 1) // segments

            def run(theta, system=system, names=names, segments=segments, length=length, y0=y0):
                s = jf.set_parameters(system, {n: theta[i] for i, n in enumerate(names)})
                starts = jnp.arange(segments) * length * 1e-3 + t0
                return jax.vmap(lambda a: jf.rk4_scan(s.vector_field, y0, a, 1e-3, length // 10, 10)[1][:, 0])(starts)

            for kind, fn in (("forward", eqx.filter_jit(run)), ("Jacobian", eqx.filter_jit(jax.jacfwd(run)))):
                theta = jnp.asarray(p)
                _, compile_s, seconds = timed(lambda fn=fn, theta=theta: fn(theta).block_until_ready(), 5)
                out[f"{name}, {segments} segment(s), {kind}, {lookup}"] = (1e3 * seconds, compile_s)
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(measure()))
        return
    results = {}
    for label, opt in (("loop kernels", "1"), ("XLA default", "0")):
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"JAXFRICTION_XLA_LOOP_KERNELS": opt}
        done = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True,
                              check=True)
        results[label] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"load average {os.getloadavg()}, cores {os.cpu_count()}")
    print(f"| evaluation | {' | '.join(results)} (ms, median of 5; compile s) |")
    print("|---|" + "---|" * len(results))
    for key in results["loop kernels"]:
        cells = [f"{results[label][key][0]:.1f} ({results[label][key][1]:.1f} s)" for label in results]
        print(f"| {key} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
