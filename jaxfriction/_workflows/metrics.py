"""Observables of one run measured over a final window, with their gradients."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._integrate.simulate import simulate
from .._observables.stick import stick_fraction

#: Gradient modes: None (no gradient), forward (``jax.jvp``: one tangent per parameter
#: carried along the run, primal computed once, no stored trajectory) or reverse
#: (``jax.vjp`` through the transient as a checkpointed scan, memory O(sqrt(steps)) there;
#: the measured window is saved at every step anyway). ``"auto"`` picks
#: forward for up to :data:`FORWARD_MAX` parameters and reverse beyond. Measured on the
#: default sweep (1024 lanes, 2 CPU devices, ``scripts/bench.py``): forward costs 2.5
#: forward runs for one parameter and 4.2 for two, reverse 17 whatever their number.
GRADIENT_MODES = (None, "forward", "reverse", "auto")
FORWARD_MAX = 8


def resolve_gradient(gradient, n_params):
    """The gradient mode used for ``n_params`` parameters (``"auto"`` resolved).

    Raises: ValueError for a mode not in :data:`GRADIENT_MODES`.
    """
    if gradient not in GRADIENT_MODES:
        raise ValueError(f"gradient must be one of {GRADIENT_MODES}, got {gradient!r}")
    if gradient == "auto":
        return "forward" if n_params <= FORWARD_MAX else "reverse"
    return gradient


def window_metrics(build, params, wrt=(), *, t_measure, window, dt, gradient="auto", stick_tol=1e-6):
    """Run ``build(**params)`` from rest and measure the window ``[t_measure, t_measure + window]``.

    The run starts at rest at the origin at ``t = 0``; the transient ``[0, t_measure]`` is
    integrated without saving, the window is saved at every RK4 step (both grids
    step-aligned, :func:`~jaxfriction.integrate.grid.fixed_grid`). For a periodically
    forced system with ``t_measure = (cycles - 1) T`` and ``window = T`` the dissipation
    is Quinn's D of the last cycle (Quinn 2004 Sec. 3.1.2).

    Args:
        build: ``build(**params) -> system`` (any 1-contact-or-more jaxfriction system).
        params: dict name -> scalar (one lane; ``vmap`` this function for batches).
        wrt: names in ``params`` to differentiate D with respect to.
        t_measure: start of the window (> 0, concrete). window: its length (> 0).
        dt: RK4 step bound. gradient: one of :data:`GRADIENT_MODES`.
        stick_tol: slip speed below which a contact counts as stuck.

    Returns: dict of scalars: ``dissipation`` (friction work over the window, J),
        ``dD_d<name>`` for each name of ``wrt``, ``stick_fraction`` (window; of the
        first contact for multi-contact systems), ``peak_slip`` (largest slip speed in
        the window), ``final_position`` (first coordinate at the end), ``status`` (0 ok).

    Raises: ValueError for an unknown name in ``wrt``, a bad gradient mode, or invalid
        times (from :func:`~jaxfriction.simulate`).
    """
    unknown = [name for name in wrt if name not in params]
    if unknown:
        raise ValueError(f"wrt names {unknown} are not among the parameters {sorted(params)}")
    mode = resolve_gradient(gradient, len(wrt)) if wrt else None

    def run(varied):
        system = build(**{**params, **varied})
        y0 = jnp.zeros(2 * system.n_dof)
        pre = simulate(system, y0, 0.0, t_measure, dt, save_every=None, checkpoint=mode == "reverse")
        last = simulate(system, pre.ys[-1], t_measure, t_measure + window, dt)
        d = last.friction_dissipation[-1] - last.friction_dissipation[0]
        slip = jnp.abs(last.slip_velocity).reshape(last.ts.shape[0], -1)
        aux = {"stick_fraction": stick_fraction(last, stick_tol, contact=0 if slip.shape[1] > 1 else None),
               "peak_slip": jnp.max(slip), "final_position": last.ys[-1, 0],
               "status": jnp.maximum(pre.status, last.status)}
        return d, aux

    varied = {name: params[name] for name in wrt}
    if mode is None:
        d, aux = run({})
        grads = {}
    elif mode == "forward":
        eye = jnp.eye(len(varied), dtype=jnp.result_type(float))
        basis = {name: eye[i] for i, name in enumerate(varied)}
        if len(varied) == 1:  # one tangent: no batch axis
            d, dd, aux = jax.jvp(run, (varied,), ({k: v[0] for k, v in basis.items()},), has_aux=True)
            dd = dd[None]
        else:
            d, dd, aux = jax.vmap(lambda tangent: jax.jvp(run, (varied,), (tangent,), has_aux=True),
                                  out_axes=(None, 0, None))(basis)
        grads = {name: dd[i] for i, name in enumerate(varied)}
    else:
        (d, aux), grads = jax.value_and_grad(run, has_aux=True)(varied)
    return {"dissipation": d, **{f"dD_d{k}": v for k, v in grads.items()}, **aux}
