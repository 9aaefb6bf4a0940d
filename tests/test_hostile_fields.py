"""Every field of every public law, system and drive, given a hostile value (issue 38, item 2).

Hypothesis (derandomized: the same draws on every run) replaces one field of a valid instance
(and of the workflows' option objects: solvers, saving, gradient modes, kernels, searches,
records, templates) by NaN, inf, zero, a negative or huge number, a string, None, a boolean or
an array of the wrong shape. The constructor must either accept it or raise a ``ValueError``/``TypeError``
whose message names the field; never another exception type. In the slow suite an accepted
value is also run (the law or drive in an oscillator, the system as it is, 200 RK4 steps):
the run must end finite, or with a non-zero status, or raise such an error naming the field.
A hang fails by hypothesis's deadline.
"""

import dataclasses
import inspect

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxfriction as jf
from jaxfriction._forcing import AbstractDrive
from jaxfriction._laws.base import AbstractFrictionLaw
from jaxfriction._laws.dynamic import AbstractDynamicLaw
from jaxfriction._systems.base import AbstractFrictionSystem

HOSTILE = [float("nan"), float("inf"), -float("inf"), 0.0, -1.0, -1e-300, 1e300, -1e300, "abc", "1.0", None, True,
           [], [1.0, "a"], np.zeros((2, 3)), jnp.array([0.5, 0.7, 0.9]), jnp.array([[1.0]]), object()]

GROUND = jf.GroundMotion(values=np.stack([np.sin(np.linspace(0.0, 6.0, 101))] * 2, axis=1), dt=0.01)
#: Valid arguments of the classes that have required ones.
BASE = {
    "GroundMotion": {"values": np.sin(np.linspace(0.0, 6.0, 101))[:, None], "dt": 0.01},
    "BlockOnShakingFloor": {"law": jf.VectorCoulomb(0.3), "ground": jf.Harmonic(jnp.array([1.0, 0.5]), 2.0)},
    "BurridgeKnopoffChain": {"law": jf.Quinn(0.5, 0.02), "n": 4},
    "GriffinSpringBlock": {"ground": GROUND},
    "Oscillator": {"law": jf.Quinn(0.5, 0.02), "force": jf.Harmonic(0.8, 2.0)},
    "PrescribedSlip": {"law": jf.Quinn(0.5, 0.02), "velocity": jf.Harmonic(0.1, 1.0)},
    "SpringSlider": {"law": jf.RateState()},
    "TwoBlocksOnBelt": {"law": jf.Quinn(0.5, 0.02)},
    "QuasiStaticSlider": {"law": jf.RateState()},
    "DriveSum": {"terms": (jf.Harmonic(1.0, 1.0), jf.Constant(0.5))},
    "LoadDependent": {"law": jf.Quinn(0.5, 0.02)},
    "Iwan": {"stiffness": jnp.array([1e3, 1e2]), "slip_force": jnp.array([0.3, 0.5])},
    "MaxwellSlip": {"stiffness": jnp.array([1e3, 1e2]), "alpha": jnp.array([0.5, 0.5])},
    "ModalStructure": {"law": jf.Iwan(jnp.full((3, 1), 0.5), jnp.full((3, 1), 0.1)),
                       "frequencies": jnp.array([1.0, 3.0]), "damping_ratios": jnp.array([0.01, 0.01]),
                       "contact_modes": jnp.array([[1.0, 0.5], [0.8, -0.2], [0.3, 1.0]]),
                       "force_modes": jnp.array([1.0, -1.0]), "normal": jnp.ones(3)},
}
#: Classes left out, and why.
SKIP = {"QuasiStaticSlider": "adaptive stiff solve per draw (its errors are in tests/test_corner_errors.py)"}


def _public(base) -> list[type]:
    return sorted((getattr(jf, n) for n in jf.__all__ if inspect.isclass(getattr(jf, n))
                   and issubclass(getattr(jf, n), base) and not inspect.isabstract(getattr(jf, n))
                   and n not in SKIP), key=lambda c: c.__name__)


CLASSES = _public((AbstractFrictionLaw, AbstractDynamicLaw, AbstractFrictionSystem, AbstractDrive))
#: The option objects of the workflows (solvers, saving, gradients, kernels, searches, records):
#: construction only (their runs are the workflows' own tests and scripts/studies/hostile_inputs.py).
OPTIONS = sorted([jf.EventDriven, jf.MoreauJean, jf.NaEltawil2D, jf.WestermoUdwadia, jf.RK4, jf.ClassicRK4,
                  jf.SaveAt, jf.AutoMode, jf.CompiledLoopKernel, jf.FusedKernel, jf.GlobalSearch, jf.SteadyState,
                  jf.Measurement, jf.Template], key=lambda c: c.__name__)
BASE.update({
    "Measurement": {"t": np.linspace(0.0, 1.0, 11), "q": np.zeros(11)},
    "Template": {"system": jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 2.0)), "dt": 0.01,
                 "t1": 20.0, "window": 10.0},
})


def _names_field(exc: Exception, field: str) -> bool:
    text = str(exc).lower()
    return field.lower() in text or field.lower().replace("_", " ") in text


def _construct(cls, field, value):
    """The instance with ``field`` set to ``value``, or the error it raised (checked here)."""
    kwargs = dict(BASE.get(cls.__name__, {}), **{field: value})
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        assert _names_field(exc, field), f"{cls.__name__}({field}={value!r}): {type(exc).__name__}: {exc}"
        return None


def _run(instance):
    """200 RK4 steps of the instance (a law or drive inside an oscillator)."""
    if isinstance(instance, AbstractDrive):
        system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=instance)
    elif isinstance(instance, (AbstractFrictionLaw, AbstractDynamicLaw)):
        if getattr(instance, "vector", False):
            system = jf.BlockOnShakingFloor(law=instance, ground=jf.Harmonic(jnp.array([1.0, 0.5]), 2.0))
        else:
            system = jf.Oscillator(law=instance, force=jf.Harmonic(0.8, 2.0))
    else:
        system = instance
    return jf.simulate(system, jnp.full(2 * system.n_dof, 0.1), 0.0, 0.2, 1e-3)


def _fields(cls):
    return [f.name for f in dataclasses.fields(cls)]


CASES = [(cls, name) for cls in CLASSES for name in _fields(cls)]
OPTION_CASES = [(cls, name) for cls in OPTIONS for name in _fields(cls)]


@pytest.mark.parametrize("cls, field", CASES + OPTION_CASES,
                         ids=[f"{c.__name__}.{n}" for c, n in CASES + OPTION_CASES])
@settings(derandomize=True, max_examples=len(HOSTILE), deadline=None)
@given(value=st.sampled_from(HOSTILE))
def test_a_hostile_field_is_refused_by_name_or_accepted(cls, field, value):
    _construct(cls, field, value)


def _finite_or_flagged(traj) -> bool:
    return int(traj.status) != 0 or bool(np.all(np.isfinite(np.asarray(traj.ys))))


@pytest.mark.slow  # a compiled run per accepted draw: about 1,000 runs
@pytest.mark.parametrize("cls, field", CASES, ids=[f"{c.__name__}.{n}" for c, n in CASES])
@settings(derandomize=True, max_examples=8, deadline=60_000)
@given(value=st.sampled_from(HOSTILE))
def test_an_accepted_hostile_field_runs_finite_or_flagged(cls, field, value):
    instance = _construct(cls, field, value)
    if instance is None:
        return
    try:
        traj = _run(instance)
    except (ValueError, TypeError) as exc:
        assert _names_field(exc, field), f"{cls.__name__}({field}={value!r}) at run: {type(exc).__name__}: {exc}"
        return
    assert _finite_or_flagged(traj), f"{cls.__name__}({field}={value!r}): status 0 with non-finite states"
