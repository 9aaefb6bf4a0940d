"""Quinn 2004 Fig. 11: two blocks on a belt with coupled contacts, against Moreau-Jean.

``kappa = 2``, ``mu1 = 0.5``, ``mu2 = 0.25``, ``u(t) = sin(0.5 t)``, both blocks at rest.
Quinn's law (coupled ``f_eq`` of Sec. 3.3) with RK4 is compared with the exact
Moreau-Jean scheme on a 10x finer step; the paper says the two are indistinguishable.
The paper prints neither ``dt`` nor ``eps`` for this figure; we use ``dt = 1e-3`` and
``eps = 2 dt``. Stick means ``|z'| < 1e-4`` for Quinn's law and ``|z'| = 0`` (below 1e-9)
for Moreau-Jean, which sticks exactly.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from .._exact.moreau_jean import MoreauJean
from .._integrate.simulate import simulate
from .._laws import Coulomb, Quinn
from .._observables.energy import relative_energy_residual
from .._observables.stick import stick_fraction, stick_intervals
from .._systems.chain import TwoBlocksOnBelt

MU = (0.5, 0.25)


def _contact_intervals(traj, tol):
    intervals = [stick_intervals(traj, tol, contact=k).tolist() for k in range(2)]
    return intervals, np.array([float(stick_fraction(traj, tol, contact=k)) for k in range(2)])


def quinn_fig11(dt=1e-3, t1=50.0) -> tuple[dict, tuple]:
    """Run Fig. 11. Returns ``(numbers, (quinn_trajectory, moreau_jean_trajectory))``.

    ``numbers``: stick fractions and intervals of both interfaces for both solutions and the
    largest deviation of ``x1``, ``x2`` between them. Raises ValueError for ``dt <= 0``,
    ``t1 <= 0``.
    """
    check_real("dt", dt, positive=True)
    check_real("t1", t1, positive=True)
    mu = jnp.array(MU)
    quinn = simulate(TwoBlocksOnBelt(law=Quinn(mu, 2 * dt)), jnp.zeros(4), 0.0, t1, dt, save_every=10)  # type: ignore[arg-type, call-arg]
    exact = simulate(TwoBlocksOnBelt(law=Coulomb(mu)), jnp.zeros(4), 0.0, t1, dt / 10, solver=MoreauJean(),  # type: ignore[arg-type, call-arg]
                     save_every=100)
    q_int, q_frac = _contact_intervals(quinn, 1e-4)
    e_int, e_frac = _contact_intervals(exact, 1e-9)
    deviation = np.max(np.abs(np.asarray(quinn.position) - np.asarray(exact.position)), axis=0)
    numbers = {
        "dt": dt, "eps": 2 * dt, "t1": t1, "kappa": 2.0, "mu": list(MU),
        "stick_fraction_quinn": q_frac.tolist(), "stick_fraction_moreau_jean": e_frac.tolist(),
        "max_deviation_x": deviation.tolist(),
        "stick_intervals_quinn": q_int, "stick_intervals_moreau_jean": e_int,
        "energy_residual_quinn": float(relative_energy_residual(quinn)),
    }
    return numbers, (quinn, exact)
