"""Na, El-Tawil, Ibrahim and Eltawil's 2-D stick-slip algorithm (paper 003, Sec. 2.3), as printed.

A rigid block on a floor shaken in x and y, state ``[u (2), V (2), E_friction, E_damping,
W_input]`` in the floor frame (``V = u' - w'`` the relative velocity, ``u''_abs = V' + w''``
the block's acceleration). Each fixed step ``[t_i, t_i + h]`` is classified by the paper's
cases from the floor's inertial force at the end of the step, ``R = |w''(t_i + h)| > mu_s g``
(the root-sum-of-squares test), whether the block sticks (``V = 0`` exactly), and which
relative-velocity components change direction over a trial RK4 step with eq. (6):

====  =====================  ==============================================================
case  condition              block acceleration over the step
====  =====================  ==============================================================
1.1   R, sticking            slip starts: eq. (6), sub-stepped
1.2   R, both change         sub-stepped; at the crossing ``V = 0``, then eq. (6) restarts
                             along ``w''``
1.3   R, one changes         sub-stepped with eq. (7)
1.4   R, none changes        eq. (6)
2.1   not R, both change     sub-stepped; at the crossing the block sticks (``u'' = w''``)
2.2   not R, one changes     sub-stepped with eq. (7)
2.3   not R, none changes    eq. (6)
3     not R, sticking        stick, ``u'' = w''``
====  =====================  ==============================================================

A step in cases 1.1-1.3, 2.1 and 2.2 is redone as ``substeps`` equal sub-steps (the paper's
20), each classified by the same table at its own resolution, so a transition is placed to
within ``h / substeps``; inside the sub-step where both components change, the crossing
is placed by linear interpolation of the trial velocity. Every flow is one RK4 step.

Readings of the printed text (paper 003 has no pseudo-code; each choice is tested):

- Eq. (6) as printed multiplies the *signed* relative velocity by ``sign(w'_x(t_i))``:
  read literally, the friction would push the block along its slip whenever the floor moved
  forward at ``t_i`` (it would do positive work). The factors are read as the orientation
  of each component, opposite to the slip: eq. (6) is ``u''_abs = -mu_k g V / |V|``,
  isotropic Coulomb; at ``V = 0`` (case 1.1, and the restart of case 1.2) the block starts
  along the floor's acceleration, ``u''_abs = mu_k g w'' / |w''|``, eq. (3)'s
  ``sign(w''(t_i))`` in 2-D (which is also where exact Coulomb starts).
- Eq. (7) splits ``mu_k g`` between x and y by the floor acceleration's components,
  ``(|w''_x|, |w''_y|) / |w''|``. "Only the direction of the changing relative velocity
  follows the direction of the surface acceleration": the changing component takes the
  sign of ``w''`` there (``sign(w''_c) |w''_c| = w''_c``), the other keeps its slip
  orientation ``-sign(V_c(t_i))``. Its force has magnitude ``mu_k m g`` (on the edge of the
  friction disc) but is not opposite to the slip: the model is not isotropic there.
- "Changing direction" over a step: ``sign(V_c(t_i)) sign(V_c(t_i + h)) <= 0``, so a
  component that reaches zero, or stays at zero, counts as changing. With this reading the
  model reduces to Westermo and Udwadia's in 1-D (``w''_y = 0``: ``V_y`` stays 0, eq. (7)
  is eq. (6), and the block can stick, case 2.1), as the paper says it extends it; with
  "strictly reverses" it could never stick under 1-D shaking.
- The cubic spline through the floor record at the sub-steps: here the floor's drive is
  evaluated at the sub-steps directly (a :class:`~jaxfriction.GroundMotion` is linear
  between its samples), so all methods of a comparison see the same floor.
- The paper uses one coefficient ``mu``; ``StaticKineticCoulomb`` is not a vector law, so
  ``mu_s = mu_k = VectorCoulomb.mu``.

Energy: the integrals are advanced with the step's flows (friction power ``-m u''_abs .
V``, input power ``-m w'' . V``); the kinetic energy that the stop of case 2.1 removes
(the round-off of the crossing) is booked as dissipated, so the balance holds to RK4
accuracy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_int, is_concrete
from .._integrate.grid import check_rounding
from .._integrate.rk4 import rk4_step
from .._integrate.solvers import (
    FixedStepSolver,
    check_saved_size,
    fixed_step_scan,
)
from .._laws.base import safe_divide
from .._laws.vector import VectorCoulomb, safe_norm
from .._systems.block2d import BlockOnShakingFloor

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem

#: Case codes of the algorithm (paper 003 Sec. 2.3), as returned by :func:`na_eltawil_step`.
CASES = {11: "1.1", 12: "1.2", 13: "1.3", 14: "1.4", 21: "2.1", 22: "2.2", 23: "2.3", 3: "3"}
_SUBSTEPPED = (11, 12, 13, 21, 22)


def _flow(system, acceleration):
    """Vector field of the state when the block's absolute acceleration is ``acceleration(t, V, a)``."""
    m = system.mass

    def field(t, y, args=None) -> Array:
        v, a = y[2:4], system.ground(t)
        block = acceleration(t, v, a)
        return jnp.concatenate([v, block - a, jnp.stack([-m * jnp.dot(block, v), 0.0, -m * jnp.dot(a, v)])])

    return field


def _classify(system, mu_s, mu_k, t, y, h):
    """``(case, trial state of eq. (6), changing (2,))`` of a step of size ``h``."""
    v = y[2:4]
    sticking = jnp.all(v == 0)
    exceeds = safe_norm(system.ground(t + h)) > mu_s * system.gravity
    field = _flow(system, _eq6(mu_k * system.gravity))
    trial = rk4_step(field, t, y, h)
    # a direction change shows in the RK4 trial or in the first-order prediction
    # V + h V'(t_i): when eq. (6)'s direction turns inside the step, RK4's stages can
    # average a crossing away
    euler = v + h * field(t, y)[2:4]
    changing = (jnp.sign(v) * jnp.sign(trial[2:4]) <= 0) | (jnp.sign(v) * jnp.sign(euler) <= 0)
    both, one = jnp.all(changing), jnp.any(changing)
    slip_case = jnp.where(both, 12, jnp.where(one, 13, 14)) + jnp.where(exceeds, 0, 9)
    return jnp.where(sticking, jnp.where(exceeds, 11, 3), slip_case), trial, changing


def _eq6(limit):
    def acceleration(t, v, a) -> Array:  # -mu g V/|V|; along the floor's acceleration at V = 0
        speed = safe_norm(v)
        return limit * jnp.where(speed > 0, -safe_divide(v, speed), safe_divide(a, safe_norm(a)))

    return acceleration


def _eq7(limit, changing, orientation):
    def acceleration(t, v, a) -> Array:
        return limit * safe_divide(jnp.where(changing, a, jnp.abs(a) * orientation), safe_norm(a))

    return acceleration


def na_eltawil_step(system: BlockOnShakingFloor, mu_s: ArrayLike, mu_k: ArrayLike, t: ArrayLike, y: Array,
                    h: ArrayLike) -> tuple[Array, Array]:
    """One step of the algorithm at the resolution ``h``, without sub-steps (module docstring).

    Args:
        system: a :class:`~jaxfriction.BlockOnShakingFloor`.
        mu_s: coefficient of the stick test ``|w''| > mu_s g``.
        mu_k: coefficient of the sliding acceleration ``mu_k g``.
        t: time (s).
        y: full state (7,).
        h: step (s).

    Returns:
        ``(state at t + h, case)``, ``case`` a key of :data:`CASES` (an int array).
    """
    case, trial, changing = _classify(system, mu_s, mu_k, t, y, h)
    limit, m = mu_k * system.gravity, system.mass
    v = y[2:4]
    # cases 1.3 / 2.2: eq. (7), the changing component along w'', the other keeps its slip side
    by_eq7 = rk4_step(_flow(system, _eq7(limit, changing, -jnp.sign(v))), t, y, h)
    # cases 1.2 / 2.1: both components cross; place the crossing by linear interpolation
    dv = v - trial[2:4]
    theta = jnp.clip(safe_divide(jnp.dot(v, dv), jnp.dot(dv, dv)), 0.0, 1.0)
    crossed = rk4_step(_flow(system, _eq6(limit)), t, y, theta * h)
    vc = crossed[2:4]
    stopped = crossed.at[2:4].set(0.0).at[4].add(0.5 * m * jnp.dot(vc, vc))
    restarted = rk4_step(_flow(system, _eq6(limit)), t + theta * h, stopped, (1.0 - theta) * h)
    out = jnp.select(
        [case == 3, case == 21, case == 12, (case == 13) | (case == 22)],
        [y, stopped, restarted, by_eq7],
        trial,  # 1.1 (eq. (6) from V = 0 starts along w''), 1.4, 2.3
    )
    return out, case


class NaEltawil2D(FixedStepSolver):
    """Na et al.'s 2-D stick-slip model (paper 003 Sec. 2.3): Westermo-Udwadia in 2-D.

    A solver object for :func:`~jaxfriction.simulate` on a
    :class:`~jaxfriction.BlockOnShakingFloor` with ``VectorCoulomb`` friction (``viscous``
    must be 0): the algorithm of cases 1.1-3 with eqs. (6) and (7), fixed step ``dt``,
    transition steps redone in ``substeps`` sub-steps, RK4 inside. The module docstring
    gives the cases and how the printed ambiguities are read. Runs under ``jit``/``vmap``
    (no Python control flow per step) and is differentiable where the algorithm is
    continuous (in the parameters of a run whose sequence of cases does not change).

    Args:
        substeps: sub-steps of a transition step (static int, paper: 20).
        rounding: step-count convention, ``"ceil"`` or ``"round"``
            (:func:`~jaxfriction.fixed_grid`).

    Raises:
        ValueError: ``substeps < 1``; when integrating, another system or law, or a
            viscous term.

    Source: paper 003 Sec. 2.3 (cases 1.1-3, eqs. 6-7), Sec. 3 (dt = 0.2 ms).
    """

    substeps: int = eqx.field(default=20, static=True)
    rounding: str = eqx.field(default="ceil", static=True)

    def __check_init__(self):
        check_rounding(self.rounding)
        check_int("substeps", self.substeps, minimum=1)

    def check_system(self, system: AbstractFrictionSystem) -> None:
        """Raise ValueError unless ``system`` is a BlockOnShakingFloor with VectorCoulomb
        friction and no viscous part (a concrete ``law.viscous`` other than 0)."""
        if not isinstance(system, BlockOnShakingFloor) or not isinstance(system.law, VectorCoulomb):
            raise ValueError("NaEltawil2D integrates a BlockOnShakingFloor with VectorCoulomb friction, got "
                             f"{type(system).__name__} with {type(getattr(system, 'law', None)).__name__}")
        viscous = system.law.viscous
        if is_concrete(viscous) and np.any(np.asarray(viscous) != 0):
            raise ValueError(f"law.viscous must be 0 for NaEltawil2D (paper 003 has none), got {viscous}")

    def integrate_on_grid(self, system: AbstractFrictionSystem, y0: Array, t0: ArrayLike, h: ArrayLike,
                          n_saves: int, every: int, args) -> tuple[Array, Array, Array]:
        del args
        self.check_system(system)
        assert isinstance(system, BlockOnShakingFloor) and isinstance(system.law, VectorCoulomb)  # checked above
        mu = system.law.mu
        check_saved_size(n_saves + 1, y0.size, y0.dtype)
        k = self.substeps

        def step(t, y) -> tuple[Array, Array]:
            y1, case = na_eltawil_step(system, mu, mu, t, y, h)

            def substeps() -> Array:
                def one(y, j) -> tuple[Array, None]:
                    return na_eltawil_step(system, mu, mu, t + j * (h / k), y, h / k)[0], None

                return jax.lax.scan(one, y, jnp.arange(k))[0]

            transition = jnp.isin(case, jnp.array(_SUBSTEPPED))
            return jax.lax.cond(transition, substeps, lambda: y1), jnp.array(True)

        return fixed_step_scan(step, y0, t0, h, n_saves, every)
