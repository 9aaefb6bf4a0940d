"""Basin stability of pyBasin's / bSTAB's friction oscillator, as a jaxfriction sweep over y0.

The case (bSTAB's ``setup_friction.m``, ported by pyBasin, ``case_studies/friction``): a mass on
a spring and a damper over a belt at ``v_d = 1.5``, nondimensional, ``x'' + 2 xi x' + x = f``
with ``xi = 0.05``, friction ``mu(v_rel) = mu_d (1 + (mu_sd - 1) exp(-|v_rel| / v_0))``
(``mu_d = 0.5``, ``mu_sd = 2``, ``v_0 = 0.5``) in slip and the force balance in stick
(pyBasin: a stick band ``|v_rel| < 1e-4``, Karnopp's switch model). Initial conditions
uniform on ``x in [0.5, 2.5]``, ``x' in [-2, 0]``; 500 s; the attractor read from the last
100 s. Published (pyBasin's README, 5,000 samples): fixed point 0.3138, limit cycle 0.6862.

Here: jaxfriction's Oscillator on a Constant(1.5) surface with the same exponential-Stribeck
law and a Karnopp stick band (``eta``), RK4 at ``dt``, ``jf.sweep(..., samples=True)`` over
``y0[0]``, ``y0[1]``, ``jf.attractor`` on the last 100 s and ``jf.basin_stability``.

    PYTHONPATH=. python scripts/basin_friction.py [--n 5000] [--dt 0.005] [--eta 1e-2]

Measured (2-core CPU, 5,000 samples, dt = 0.005, eta = 0.01, 78 s): fixed point 0.3508 +-
0.0067, period-1 (stick-slip, 8.5 % of the period stuck) 0.6466 +- 0.0068, period-2 0.0010,
non-periodic 0.0016: 5.5 standard errors from pyBasin's 0.3138. Not reproduced yet: pyBasin's
law is not this one (its slip force is ``tanh(50 v_rel) mu(v_rel)``, smoothed over |v_rel| ~
0.02, and its stick relaxes ``x'`` to the belt at rate 1); a smaller band (eta = 1e-3, dt =
0.002) has 3,238 of 5,000 lanes flagged STATUS_UNSTABLE_STEP by the library's stick-band step
check, which basin_stability leaves out of n (read ``flagged`` before the fractions).
"""

from __future__ import annotations

import argparse
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402
from jaxfriction._laws.base import AbstractFrictionLaw, force_balance  # noqa: E402

PUBLISHED = {"fixed point": 0.3138, "limit cycle": 0.6862}
V_D, XI, MU_SD, MU_D, V_0 = 1.5, 0.05, 2.0, 0.5, 0.5


class ExpStribeckKarnopp(AbstractFrictionLaw):
    """``-N mu(v) sgn(v)``, ``mu = mu_k + (mu_s - mu_k) exp(-|v| / v_0)``, for ``|v| >= eta``;
    the force balance clipped to ``mu_s N`` inside the band (Karnopp 1985)."""

    mu_s: float = 1.0
    mu_k: float = 0.5
    v_0: float = 0.5
    eta: float = 1e-4

    def constraints(self):
        return ()

    def __call__(self, v, f_eq, normal):
        mu = self.mu_k + (self.mu_s - self.mu_k) * jnp.exp(-jnp.abs(v) / self.v_0)
        return jnp.where(jnp.abs(v) < self.eta, force_balance(f_eq, self.mu_s * normal), -normal * mu * jnp.sign(v))

    def static_limit(self, normal):
        return self.mu_s * normal


def system(eta=1e-4):
    law = ExpStribeckKarnopp(mu_s=MU_SD * MU_D, mu_k=MU_D, v_0=V_0, eta=eta)
    return jf.Oscillator(law=law, surface=jf.Constant(V_D), damping=2 * XI)


def basins(n=5000, dt=0.005, eta=1e-2, t1=500.0, window=100.0, seed=0, chunk_size=1024):
    """The sweep and its basin-stability fractions (``xarray.Dataset``)."""
    rng = np.random.default_rng(seed)
    grid = {"y0[0]": rng.uniform(0.5, 2.5, n), "y0[1]": rng.uniform(-2.0, 0.0, n)}
    # stuck: inside the Karnopp band (the band holds a small drift velocity, not exactly 0)
    observables = {"stick_fraction": lambda traj: jf.stick_fraction(traj, v_tol=eta), "attractor": jf.attractor}
    ds = jf.sweep(system(eta), grid, samples=True, t1=t1, window=window, dt=dt, observables=observables,
                  progress=False, chunk_size=chunk_size)
    return jf.basin_stability(ds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--dt", type=float, default=0.005)
    parser.add_argument("--eta", type=float, default=1e-2)
    args = parser.parse_args()
    start = time.perf_counter()
    ds = basins(args.n, args.dt, args.eta)
    seconds = time.perf_counter() - start
    bs, se = ds["basin_stability"], ds["basin_stability_stderr"]
    print(f"{args.n} initial conditions, dt = {args.dt}, eta = {args.eta}: {seconds:.1f} s "
          f"(flagged {ds.attrs['flagged']})")
    for name in bs["basin"].values:
        if float(bs.sel(basin=name)) > 0:
            print(f"  {name:13s} {float(bs.sel(basin=name)):.4f} +- {float(se.sel(basin=name)):.4f}")
    cycle = float(bs.sel(basin=["period-1", "period-2", "period-3", "period-4"]).sum())
    print(f"  published (pyBasin): fixed point {PUBLISHED['fixed point']}, limit cycle {PUBLISHED['limit cycle']}; "
          f"here limit cycle (period-k) {cycle:.4f}")
    periodic = ds["attractor"].values == 1
    print(f"  stick fraction of the period-1 lanes: {np.nanmin(ds['stick_fraction'].values[periodic]):.3f} .. "
          f"{np.nanmax(ds['stick_fraction'].values[periodic]):.3f}")


if __name__ == "__main__":
    main()
