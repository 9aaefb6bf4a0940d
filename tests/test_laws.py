import jax

jax.config.update("jax_enable_x64", True)

import dataclasses  # noqa: E402
import functools  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import jaxfriction as jf  # noqa: E402

N_POINTS = 1536  # random (v, f_eq, N) points per hypothesis example
EXAMPLES = 25  # hypothesis examples (parameter sets + seeds) per law and property
ULP = np.finfo(np.float64).eps
NORM = -math.expm1(-3.0)  # Threlfall's 1 - e^-3


# --------------------------------------------------------------------------------------
# parameter strategies


def decades(lo, hi):
    """Positive floats spread over decades 10**lo .. 10**(hi+1)."""
    return st.builds(lambda m, e: m * 10.0**e, st.floats(1.0, 9.99), st.integers(lo, hi))


COEF = st.one_of(st.just(0.0), st.just(1.0), st.floats(1e-3, 2.0))  # mu = 0 allowed
COEF_POS = st.one_of(st.just(1.0), st.floats(1e-2, 2.0))
FRAC = st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0))
SCALE = decades(-6, 0)  # eps, eta, v0, v_s
VISCOUS = st.one_of(st.just(0.0), st.floats(0.0, 10.0))
WEAKENING = st.one_of(st.just(0.0), st.just(3.0), st.floats(0.0, 10.0))  # Awrejcewicz delta
EXPONENT = st.one_of(st.just(1.0), st.just(2.0), st.floats(0.5, 3.0))  # Stribeck delta


def static_kinetic(coef, **rest):
    return st.builds(lambda mu_s, frac, **kw: dict(mu_s=mu_s, mu_k=frac * mu_s, **kw), coef, FRAC, **rest)


def karnopp_params(coef):
    def build(mu_s, frac, eta, default):
        return dict(mu_s=mu_s, eta=eta, mu_k=None if default else frac * mu_s)

    return st.builds(build, coef, FRAC, SCALE, st.booleans())


def mu_static(p):
    return p["mu"] if "mu" in p else p["mu_s"]


def zeta_of(f, limit):
    """Quinn's zeta = clip(f_eq / (mu N), -1, 1), 0 where mu N = 0."""
    safe = np.where(limit > 0, limit, 1.0)
    return np.where(limit > 0, np.clip(f / safe, -1.0, 1.0), 0.0)


# --------------------------------------------------------------------------------------
# the table of laws


@dataclasses.dataclass(frozen=True, repr=False)
class Spec:
    cls: type
    params: Callable  # coefficient strategy -> strategy of constructor kwargs
    pure: Callable  # pure-function form: (v, f, N, p) -> force
    scale: Callable  # p -> characteristic velocity
    kinks: Callable  # (p, f, N) -> list of special velocities (kinks, band edges)
    lipschitz: Callable | None = None  # (p, N) -> (L_v, L_f)
    kink_distance: Callable | None = None  # (p, v, f, N) -> normalized distance to kinks

    def __str__(self):
        return self.cls.__name__

    __repr__ = __str__


def _quinn_kinks(p, f, N):
    eps = p["eps"]
    zeta = zeta_of(f, p["mu"] * N)
    return [eps * zeta + eps, eps * zeta - eps, eps + 0 * f, -eps + 0 * f]


def _quinn_distance(p, v, f, N):
    limit = p["mu"] * N
    zeta = zeta_of(f, limit)
    return np.minimum(np.abs(np.abs(f / limit) - 1), np.abs(np.abs(v / p["eps"] - zeta) - 1))


def _awrejcewicz_distance(p, v, f, N):
    r = np.abs(v) / p["eps"]
    return np.minimum.reduce([np.abs(r - 1), r, np.abs(np.abs(f / (p["mu_s"] * N)) - 1)])


def _pm(x):
    return lambda p, f, N: [p[x] + 0 * f, -p[x] + 0 * f]


SPECS = [
    Spec(
        jf.Coulomb,
        lambda c: st.fixed_dictionaries({"mu": c}),
        lambda v, f, N, p: jf.coulomb(v, f, N, p["mu"]),
        lambda p: 1.0,
        lambda p, f, N: [1.0 + 0 * f, -1.0 + 0 * f],
    ),
    Spec(
        jf.StaticKineticCoulomb,
        lambda c: static_kinetic(c),
        lambda v, f, N, p: jf.static_kinetic_coulomb(v, f, N, p["mu_s"], p["mu_k"]),
        lambda p: 1.0,
        lambda p, f, N: [1.0 + 0 * f, -1.0 + 0 * f],
    ),
    Spec(
        jf.ViscousCoulomb,
        lambda c: st.fixed_dictionaries({"mu": c, "viscous": VISCOUS}),
        lambda v, f, N, p: jf.viscous_coulomb(v, f, N, p["mu"], p["viscous"]),
        lambda p: 1.0,
        lambda p, f, N: [1.0 + 0 * f, -1.0 + 0 * f],
    ),
    Spec(
        jf.Karnopp,
        karnopp_params,
        lambda v, f, N, p: jf.karnopp(
            v, f, N, p["mu_s"], p["mu_s"] if p["mu_k"] is None else p["mu_k"], p["eta"]
        ),
        lambda p: p["eta"],
        _pm("eta"),
    ),
    Spec(
        jf.VelocityLimited,
        lambda c: st.fixed_dictionaries({"mu": c, "eps": SCALE}),
        lambda v, f, N, p: jf.velocity_limited(v, f, N, p["mu"], p["eps"]),
        lambda p: p["eps"],
        _pm("eps"),
        lipschitz=lambda p, N: (p["mu"] * N / p["eps"], 0.0),
        kink_distance=lambda p, v, f, N: np.abs(np.abs(v / p["eps"]) - 1),
    ),
    Spec(
        jf.Quinn,
        lambda c: st.fixed_dictionaries({"mu": c, "eps": SCALE}),
        lambda v, f, N, p: jf.quinn(v, f, N, p["mu"], p["eps"]),
        lambda p: p["eps"],
        _quinn_kinks,
        lipschitz=lambda p, N: (p["mu"] * N / p["eps"], 1.0),
        kink_distance=_quinn_distance,
    ),
    Spec(
        jf.StaticKineticQuinn,
        lambda c: static_kinetic(c, eps=SCALE),
        lambda v, f, N, p: jf.static_kinetic_quinn(v, f, N, p["mu_s"], p["mu_k"], p["eps"]),
        lambda p: p["eps"],
        _pm("eps"),
    ),
    Spec(
        jf.Threlfall,
        lambda c: st.fixed_dictionaries({"mu": c, "v0": SCALE, "viscous": VISCOUS}),
        lambda v, f, N, p: jf.threlfall(v, f, N, p["mu"], p["v0"], p["viscous"]),
        lambda p: p["v0"],
        _pm("v0"),
        # slope 3 mu N e^{-3|v|/v0} / (v0 (1 - e^-3)) inside, F_v outside: the max bounds both
        lipschitz=lambda p, N: (np.maximum(3 * p["mu"] * N / (p["v0"] * NORM), p["viscous"]), 0.0),
        kink_distance=lambda p, v, f, N: np.minimum(np.abs(np.abs(v / p["v0"]) - 1), np.abs(v / p["v0"])),
    ),
    Spec(
        jf.Awrejcewicz,
        lambda c: st.fixed_dictionaries({"mu_s": c, "delta": WEAKENING, "eps": SCALE}),
        lambda v, f, N, p: jf.awrejcewicz(v, f, N, p["mu_s"], p["delta"], p["eps"]),
        lambda p: p["eps"],
        _pm("eps"),
        # band: |A'| <= 1.5/eps times |-f + F_s sgn| <= 2 F_s (V4) or 2 F_s (V3); slip: F_s delta;
        # d/df_eq = 1 - A <= 1 in V4, 0 elsewhere
        lipschitz=lambda p, N: (
            np.maximum(3 * p["mu_s"] * N / p["eps"], p["mu_s"] * N * p["delta"]),
            1.0,
        ),
        kink_distance=_awrejcewicz_distance,
    ),
    Spec(
        jf.Stribeck,
        lambda c: static_kinetic(c, v_s=SCALE, delta=EXPONENT),
        lambda v, f, N, p: jf.stribeck(v, f, N, p["mu_s"], p["mu_k"], p["v_s"], p["delta"]),
        lambda p: p["v_s"],
        _pm("v_s"),
        kink_distance=lambda p, v, f, N: np.abs(v / p["v_s"]),
    ),
]
SPEC = {str(s): s for s in SPECS}
REGULARIZED = [SPEC[n] for n in ("VelocityLimited", "Quinn", "Threlfall", "Awrejcewicz")]
SMOOTH = [SPEC[n] for n in ("Quinn", "VelocityLimited", "Threlfall", "Awrejcewicz", "Stribeck")]


# --------------------------------------------------------------------------------------
# random points and evaluation helpers


def draw_points(rng, spec, p, n=N_POINTS, zero_normal=True):
    """(v, f_eq, N) with exact zeros, exact f_eq = +-mu_s N, exact and near-exact band edges."""
    N = rng.uniform(0.1, 10.0, n)
    if zero_normal:
        N[rng.random(n) < 0.02] = 0.0
    limit = mu_static(p) * N
    sgn = rng.choice([-1.0, 1.0], n)
    kind = rng.integers(0, 8, n)
    f = limit * rng.uniform(-3.0, 3.0, n)
    f = np.where(kind == 0, sgn * limit, f)
    f = np.where(kind == 1, 0.0, f)
    wobble = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-16, -10, n)
    f = np.where(kind == 2, sgn * limit * (1 + wobble), f)
    f = np.where(kind == 3, sgn * limit * 10.0 ** rng.uniform(0, 3, n), f)
    f = np.where(limit == 0, rng.uniform(-3.0, 3.0, n), f)

    s = spec.scale(p)
    special = np.stack(np.broadcast_arrays(0.0 * f, *spec.kinks(p, f, N)))
    pick = special[rng.integers(0, len(special), n), np.arange(n)]
    sgn = rng.choice([-1.0, 1.0], n)
    kind = rng.integers(0, 10, n)
    v = sgn * s * 10.0 ** rng.uniform(-10, 3, n)
    v = np.where(kind == 0, 0.0, v)
    v = np.where(kind == 1, pick, v)
    v = np.where(kind == 2, pick * (1 + sgn * 10.0 ** rng.uniform(-15, -8, n)), v)
    v = np.where(kind == 3, s * rng.uniform(-3.0, 3.0, n), v)
    v = np.where(kind == 4, sgn * 1e-300, v)
    return v, f, N


def draw_case(data, spec, coef=COEF, **kw):
    p = data.draw(spec.params(coef), label="params")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    law = spec.cls(**p)
    v, f, N = draw_points(np.random.default_rng(seed), spec, p, **kw)
    return p, law, v, f, N, np.random.default_rng(seed + 1)


@jax.jit
def _call(law, v, f, N):
    return law(v, f, N), law.bound(v, N), law.static_limit(N)


def call(law, v, f, N):
    """(force, bound, static_limit) as numpy arrays, module called on whole arrays."""
    return [np.asarray(a) for a in _call(law, v, f, N)]


def _per_point(p, n):
    return {k: None if x is None else np.full(n, float(x)) for k, x in p.items()}


@functools.partial(jax.jit, static_argnums=0)
def _values_pp(cls, p, v, f, N):
    def one(p, v, f, N):
        law = cls(**p)
        return law(v, f, N), law.bound(v, N)

    return jax.vmap(one)(p, v, f, N)


@functools.partial(jax.jit, static_argnums=0)
def _grads_pp(cls, p, v, f, N):
    return jax.vmap(jax.grad(lambda p, v, f, N: cls(**p)(v, f, N), argnums=(0, 1, 2)))(p, v, f, N)


@functools.partial(jax.jit, static_argnums=0)
def _module_grads(cls, p, v, f, N):
    fn = lambda p, v, f, N: cls(**p)(v, f, N)  # noqa: E731
    return jax.vmap(jax.value_and_grad(fn, argnums=(0, 1, 2, 3)), in_axes=(None, 0, 0, 0))(p, v, f, N)


@functools.partial(jax.jit, static_argnums=0)
def _pure_grads(pure, p, v, f, N):
    fn = lambda v, f, N, p: pure(v, f, N, p)  # noqa: E731
    return jax.vmap(jax.value_and_grad(fn, argnums=(0, 1, 2, 3)), in_axes=(0, 0, 0, None))(v, f, N, p)


def explain(bad, **arrays):
    idx = np.flatnonzero(bad)[:3]
    rows = [", ".join(f"{k}={np.asarray(a)[i]!r}" for k, a in arrays.items()) for i in idx]
    return f"{bad.sum()} bad points, e.g.\n  " + "\n  ".join(rows)


def law_property(specs=SPECS, examples=EXAMPLES):
    def wrap(fn):
        fn = given(data=st.data())(fn)
        fn = settings(max_examples=examples, deadline=None)(fn)
        return pytest.mark.parametrize("spec", specs, ids=str)(fn)

    return wrap


# --------------------------------------------------------------------------------------
# 1-3: bound, odd symmetry, value at v = 0


@law_property()
def test_bound(spec, data):
    p, law, v, f, N, _ = draw_case(data, spec)
    F, B, _ = call(law, v, f, N)
    assert np.all(np.isfinite(F)), explain(~np.isfinite(F), v=v, f=f, N=N, F=F)
    bad = np.abs(F) > B * (1 + 1e-12) + 1e-15
    assert not bad.any(), explain(bad, v=v, f=f, N=N, F=F, bound=B)


@law_property()
def test_odd_symmetry(spec, data):
    p, law, v, f, N, _ = draw_case(data, spec)
    F, B, _ = call(law, v, f, N)
    F_neg, _, _ = call(law, -v, -f, N)
    bad = np.abs(F_neg + F) > 1e-12 * B + 1e-300
    assert not bad.any(), explain(bad, v=v, f=f, N=N, F=F, F_neg=F_neg)


@law_property()
def test_value_at_zero_velocity(spec, data):
    p, law, v, f, N, _ = draw_case(data, spec)
    F, _, limit = call(law, np.zeros_like(v), f, N)
    np.testing.assert_array_equal(limit, mu_static(p) * N)
    if spec.cls.keeps_coulomb_structure:
        expected = np.clip(f, -limit, limit)
        bad = np.abs(F - expected) > 1e-14 * limit
        assert not bad.any(), explain(bad, f=f, N=N, F=F, expected=expected)
    else:
        assert np.all(F == 0), explain(F != 0, f=f, N=N, F=F)


# --------------------------------------------------------------------------------------
# 4: Lipschitz continuity of the regularized laws


@law_property(REGULARIZED)
def test_lipschitz_continuity(spec, data):
    p, law, v1, f1, N, rng = draw_case(data, spec)
    n = len(v1)
    limit = mu_static(p) * N
    keep_v = rng.random(n) < 0.9
    keep_f = rng.random(n) < 0.7
    dv = keep_v * rng.choice([-1.0, 1.0], n) * spec.scale(p) * 10.0 ** rng.uniform(-10, -1, n)
    f_scale = np.where(limit > 0, limit, 1.0)
    df = keep_f * rng.choice([-1.0, 1.0], n) * f_scale * 10.0 ** rng.uniform(-10, -1, n)
    v2, f2 = v1 + dv, f1 + df
    F1, B1, _ = call(law, v1, f1, N)
    F2, B2, _ = call(law, v2, f2, N)
    L_v, L_f = spec.lipschitz(p, N)
    rhs = L_v * np.abs(v2 - v1) + L_f * np.abs(f2 - f1) + 1e-13 * (B1 + B2) + 1e-300
    bad = np.abs(F2 - F1) > rhs
    assert not bad.any(), explain(bad, v1=v1, v2=v2, f1=f1, f2=f2, N=N, dF=F2 - F1, rhs=rhs)


# --------------------------------------------------------------------------------------
# 5: convergence to Coulomb


@law_property([SPEC["VelocityLimited"], SPEC["Quinn"]])
def test_coulomb_outside_the_band(spec, data):
    p, law, v, f, N, _ = draw_case(data, spec)
    F, _, _ = call(law, v, f, N)
    coulomb = np.asarray(jf.coulomb(v, f, N, p["mu"]))
    eps = p["eps"]
    if spec.cls is jf.VelocityLimited:
        outside = np.abs(v) > eps
    else:
        # Quinn's band is centred on eps * zeta: |v - eps zeta| <= eps, so it reaches |v| = 2 eps
        # (in particular Quinn is Coulomb for every f_eq once |v| > 2 eps)
        outside = np.abs(v - eps * zeta_of(f, p["mu"] * N)) > eps * (1 + 1e-12)
        outside |= np.abs(v) > 2 * eps
    bad = outside & (F != coulomb)
    assert not bad.any(), explain(bad, v=v, f=f, N=N, F=F, coulomb=coulomb)


@settings(max_examples=EXAMPLES, deadline=None)
@given(mu=COEF, seed=st.integers(0, 2**32 - 1))
def test_quinn_is_force_balance_at_zero_for_every_eps(mu, seed):
    _, f, N = draw_points(np.random.default_rng(seed), SPEC["Quinn"], {"mu": mu, "eps": 1.0})
    expected = np.clip(f, -mu * N, mu * N)
    for eps in 10.0 ** -np.arange(0, 13):
        F = np.asarray(jf.Quinn(mu=mu, eps=eps)(np.zeros_like(f), f, N))
        assert np.all(np.abs(F - expected) <= 1e-14 * mu * N), eps


CONVERGENCE = {
    # name: (params, law with width w, limit law, v = 0 included, error floor at w = 1e-6)
    "Quinn": (
        st.fixed_dictionaries({"mu": COEF_POS}),
        lambda p, w: jf.Quinn(mu=p["mu"], eps=w),
        lambda p: jf.Coulomb(mu=p["mu"]),
        True,
        lambda p: 0.0,
    ),
    "VelocityLimited": (
        st.fixed_dictionaries({"mu": COEF_POS}),
        lambda p, w: jf.VelocityLimited(mu=p["mu"], eps=w),
        lambda p: jf.Coulomb(mu=p["mu"]),
        False,
        lambda p: 0.0,
    ),
    "Threlfall": (
        st.fixed_dictionaries({"mu": COEF_POS, "viscous": VISCOUS}),
        lambda p, w: jf.Threlfall(mu=p["mu"], v0=w, viscous=p["viscous"]),
        lambda p: jf.ViscousCoulomb(mu=p["mu"], viscous=p["viscous"]),
        False,
        lambda p: p["viscous"] * 1e-6,  # outside the band the offset is F_v v0
    ),
    "Karnopp": (
        static_kinetic(COEF_POS),
        lambda p, w: jf.Karnopp(mu_s=p["mu_s"], eta=w, mu_k=p["mu_k"]),
        lambda p: jf.StaticKineticCoulomb(mu_s=p["mu_s"], mu_k=p["mu_k"]),
        True,
        lambda p: 0.0,
    ),
    "Awrejcewicz": (
        st.fixed_dictionaries({"mu_s": COEF_POS}),
        lambda p, w: jf.Awrejcewicz(mu_s=p["mu_s"], delta=0.0, eps=w),
        lambda p: jf.Coulomb(mu=p["mu_s"]),
        True,
        lambda p: 0.0,
    ),
}


@pytest.mark.parametrize("name", list(CONVERGENCE))
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_convergence_to_coulomb(name, data):
    params, make, limit_law, with_zero, floor = CONVERGENCE[name]
    p = data.draw(params, label="params")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    n = N_POINTS
    N = rng.uniform(0.1, 10.0, n)
    limit = mu_static(p) * N
    v = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-5, 1, n)  # |v| >= 1e-5
    if with_zero:
        v[rng.random(n) < 0.1] = 0.0
    f = limit * rng.uniform(-3.0, 3.0, n)
    at_limit = rng.random(n) < 0.1
    f[at_limit] = rng.choice([-1.0, 1.0], at_limit.sum()) * limit[at_limit]
    target = np.asarray(limit_law(p)(v, f, N))
    errors = [np.max(np.abs(np.asarray(make(p, w)(v, f, N)) - target)) for w in 10.0 ** -np.arange(1, 7)]
    tiny = 1e-14 * (limit.max() + np.abs(target).max())
    assert errors[0] > 0.01 * mu_static(p)  # the widest band is visibly not Coulomb
    assert all(b <= a + tiny for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] <= floor(p) * (1 + 1e-9) + tiny, errors


# --------------------------------------------------------------------------------------
# 6-7: gradients


def special_points(spec, p, N=1.3):
    """Grid of kinks: v in {0, +-tiny, +-edges, +-edges*(1 +- 1e-12), ...} x f in {0, +-L, ...}."""
    limit = mu_static(p) * N
    L = limit if limit > 0 else 1.0
    f = np.array([0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1 + 1e-16, -1 - 1e-16]) * L
    s = spec.scale(p)
    edges = (0.0, 1e-300, -1e-300, s, -s, 2 * s, -2 * s, s * (1 + 1e-12), -s * (1 - 1e-12))
    vs = [0.0 * f + x for x in edges]
    vs += [np.asarray(k) for k in spec.kinks(p, f, N * np.ones_like(f))]
    v = np.concatenate(vs)
    f = np.tile(f, len(vs))
    return v, f, np.full_like(v, N)


def assert_finite_tree(tree, what):
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        leaf = np.asarray(leaf)
        assert np.all(np.isfinite(leaf)), f"{what}: non-finite at {jax.tree_util.keystr(path)}"


@law_property(examples=10)
def test_gradients_are_finite_at_kinks(spec, data):
    p = data.draw(spec.params(COEF), label="params")
    v, f, N = special_points(spec, p)
    for name, grads in (
        ("module", _module_grads(spec.cls, p, v, f, N)),
        ("pure function", _pure_grads(spec.pure, p, v, f, N)),
    ):
        assert_finite_tree(grads, f"{spec} {name} {p}")
    # module and pure-function forms agree, value and gradient
    val_m, grads_m = _module_grads(spec.cls, p, v, f, N)
    val_p, grads_p = _pure_grads(spec.pure, p, v, f, N)
    np.testing.assert_array_equal(val_m, val_p)
    for a, b in zip((*grads_m[1:], grads_m[0]), grads_p):
        jax.tree_util.tree_map(lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-15, atol=1e-300), a, b)


def test_quinn_frictionless_is_zero_with_finite_gradients():
    v, f, N = special_points(SPEC["Quinn"], {"mu": 0.0, "eps": 0.1})
    F, (g_p, g_v, g_f, g_N) = _module_grads(jf.Quinn, {"mu": 0.0, "eps": 0.1}, v, f, N)
    assert np.all(np.asarray(F) == 0)
    for g in (g_v, g_f, g_p["eps"]):
        assert np.all(np.asarray(g) == 0)
    assert_finite_tree((g_p, g_N), "Quinn(mu=0)")
    for v0, f0 in [(0.0, 0.0), (0.0, 1.0), (0.1, 1.0), (-0.1, -2.0), (0.05, 0.0)]:
        g = jax.grad(lambda mu, eps: jf.Quinn(mu=mu, eps=eps)(v0, f0, 1.0), argnums=(0, 1))(0.0, 0.1)
        assert np.all(np.isfinite(g))
    g = jax.grad(lambda mu: jf.Quinn(mu=mu, eps=0.1)(0.05, 0.2, 1.0))(0.5)
    assert np.isfinite(g)


def test_quinn_mu_gradient_at_frictionless_limit():
    # at v = 0 Quinn is clip(f_eq, -mu N, mu N): for mu -> 0+ and f_eq = 1 its value is mu N, and Coulomb's
    # gradient there is N; Quinn must use the limit zeta -> sgn(f_eq), not zeta = 0, at mu N = 0.
    g_quinn = jax.grad(lambda mu: jf.Quinn(mu=mu, eps=0.1)(0.0, 1.0, 1.0))(0.0)
    g_coulomb = jax.grad(lambda mu: jf.Coulomb(mu=mu)(0.0, 1.0, 1.0))(0.0)
    assert float(g_coulomb) == 1.0
    assert float(g_quinn) == 1.0


def fd_step(spec, name, p, v):
    x = p[name]
    if name in ("eps", "v0", "v_s"):
        return 1e-6 * x + 0 * v
    if name == "delta" and spec.cls is jf.Awrejcewicz:
        return 1e-6 * (x + 1.0 / np.maximum(np.abs(v), p["eps"]))
    return 1e-6 * max(abs(x), 1e-2) + 0 * v


@law_property(SMOOTH, examples=15)
def test_gradients_match_finite_differences(spec, data):
    p, _, v, f, N, _ = draw_case(data, spec, coef=COEF_POS, zero_normal=False)
    away = spec.kink_distance(p, v, f, N) > 1e-4
    v, f, N = v[away], f[away], N[away]
    v, f, N = (np.resize(a, N_POINTS) for a in (v, f, N))  # fixed shape: one compilation
    assert away.sum() > 100
    n, s = len(v), spec.scale(p)
    pp = _per_point(p, n)
    g_p, g_v, g_f = _grads_pp(spec.cls, pp, v, f, N)
    steps = {"v": 1e-6 * np.clip(np.abs(v), 1e-2 * s, s), "f": 1e-6 * mu_static(p) * N}
    steps.update({k: fd_step(spec, k, p, v) for k, x in p.items() if x is not None})
    for name, h in steps.items():
        args = {"v": v, "f": f, **pp}
        plus, minus = dict(args), dict(args)
        plus[name], minus[name] = args[name] + h, args[name] - h
        dx = plus[name] - minus[name]

        def value(a):
            q = {k: a[k] for k in pp}
            return [np.asarray(x) for x in _values_pp(spec.cls, q, a["v"], a["f"], N)]

        (Fp, Bp), (Fm, Bm) = value(plus), value(minus)
        fd = (Fp - Fm) / dx
        ad = np.asarray({"v": g_v, "f": g_f}.get(name, g_p.get(name)))
        tol = 1e-6 * np.abs(ad) + 100 * ULP * (Bp + Bm) / dx
        bad = np.abs(fd - ad) > tol
        assert not bad.any(), f"d/d{name}: " + explain(bad, v=v, f=f, N=N, ad=ad, fd=fd)


@settings(max_examples=EXAMPLES, deadline=None)
@given(p=SPEC["Threlfall"].params(COEF))
def test_threlfall_slope_at_zero(p):
    expected = -3 * p["mu"] * 1.7 / (p["v0"] * NORM)
    g_module = jax.grad(lambda v: jf.Threlfall(**p)(v, 0.3, 1.7))(0.0)
    g_pure = jax.grad(lambda v: SPEC["Threlfall"].pure(v, 0.3, 1.7, p))(0.0)
    np.testing.assert_allclose([g_module, g_pure], expected, rtol=1e-12, atol=1e-300)
    # and the one-sided difference quotients agree with it (smooth through 0)
    h = 1e-7 * p["v0"]
    quotients = [float(jf.Threlfall(**p)(x, 0.0, 1.7)) / x for x in (h, -h)]
    np.testing.assert_allclose(quotients, expected, rtol=1e-6, atol=1e-300)


# --------------------------------------------------------------------------------------
# 8: known values


def quinn_appendix_a(xdot, feq, muN, eps):
    """Quinn 2004 Appendix A pseudo-code, literally."""
    if abs(feq) > muN:
        zeta = np.sign(feq / muN)
    else:
        zeta = feq / muN
    if abs(xdot - eps * zeta) > eps:
        return -muN * np.sign(xdot - eps * zeta)
    return -muN * (xdot / eps - zeta)


@law_property([SPEC["Quinn"]])
def test_quinn_matches_appendix_a_pseudocode(spec, data):
    p, _, v, f, N, _ = draw_case(data, spec, coef=COEF_POS, zero_normal=False)
    got = np.asarray(jf.quinn(v, f, N, p["mu"], p["eps"]))
    ref = np.array([quinn_appendix_a(*a, p["eps"]) for a in zip(v, f, p["mu"] * N)])
    bad = np.abs(got - ref) > 1e-13 * p["mu"] * N
    assert not bad.any(), explain(bad, v=v, f=f, N=N, got=got, ref=ref)


def test_quinn_band_reaches_twice_eps():
    law = jf.Quinn(mu=1.0, eps=0.1)
    # f_eq = mu N: zeta = 1, band is 0 <= v <= 2 eps, linear from force balance to Coulomb
    np.testing.assert_allclose(law(np.array([0.0, 0.05, 0.1, 0.15, 0.2, 0.3]), 1.0, 1.0),
                               [1.0, 0.5, 0.0, -0.5, -1.0, -1.0], atol=1e-15)
    np.testing.assert_allclose(law(np.array([0.0, -0.1, -0.2]), -2.0, 1.0), [-1.0, 0.0, 1.0], atol=1e-15)


@settings(max_examples=EXAMPLES, deadline=None)
@given(p=SPEC["Threlfall"].params(COEF_POS), N=st.floats(0.1, 10.0))
def test_threlfall_known_values(p, N):
    law = jf.Threlfall(**p)
    v0, limit = p["v0"], p["mu"] * N
    v = np.array([v0, -v0, v0 / 3, -v0 / 3, 2 * v0, -2 * v0, v0 * (1 + 1e-12), v0 * (1 - 1e-12)])
    expected = -np.sign(v) * np.where(
        np.abs(v) <= v0,
        limit * -np.expm1(-3 * np.abs(v) / v0) / NORM,
        limit + p["viscous"] * (np.abs(v) - v0),
    )
    expected[:2] = [-limit, limit]
    np.testing.assert_allclose(np.asarray(law(v, 0.5, N)), expected, rtol=1e-14, atol=0)


@settings(max_examples=EXAMPLES, deadline=None)
@given(p=SPEC["Stribeck"].params(COEF_POS), seed=st.integers(0, 2**32 - 1))
def test_stribeck_known_values(p, seed):
    law, v_s, N = jf.Stribeck(**p), p["v_s"], 2.5
    mu_s, mu_k, delta = p["mu_s"], p["mu_k"], p["delta"]
    rng = np.random.default_rng(seed)
    v = rng.choice([-1.0, 1.0], 500) * v_s * 10.0 ** rng.uniform(-6, 2, 500)
    F = np.asarray(law(v, 0.1, N))
    expected = -N * (mu_k + (mu_s - mu_k) * np.exp(-((np.abs(v) / v_s) ** delta))) * np.sign(v)
    np.testing.assert_allclose(F, expected, rtol=1e-13, atol=1e-14 * mu_s * N)
    order = np.argsort(np.abs(v))  # |f| non-increasing in |v|
    assert np.all(np.diff(np.abs(F[order])) <= 1e-15 * mu_s * N)
    tiny = np.array([1e-30, -1e-30]) * v_s  # (1e-30)^delta <= 1e-15
    np.testing.assert_allclose(law(tiny, 0.1, N), -mu_s * N * np.sign(tiny), rtol=2e-15, atol=0)
    huge = np.array([1e4, -1e4]) * v_s  # exp(-(1e4)^delta) <= e^-100
    expected = -mu_k * N * np.sign(huge)
    np.testing.assert_allclose(law(huge, 0.1, N), expected, rtol=1e-15, atol=1e-40 * mu_s * N)


def awrejcewicz_reference(v, f, F_s, delta, eps):
    """Scalar transcription of the Awrejcewicz docstring cases V1-V4 (paper eqs. 1-4)."""
    vr = -v
    sgn = np.sign(vr)
    if abs(vr) > eps:
        return F_s / (1 + delta * (abs(vr) - eps)) * sgn  # V1
    A = (vr / eps) ** 2 * (3 - 2 * abs(vr) / eps)
    if abs(f) <= F_s:
        return A * (-f + F_s * sgn) + f  # V4
    if vr != 0 and vr * f < 0:
        return (2 * A - 1) * F_s * sgn  # V3
    return F_s * (sgn if vr != 0 else np.sign(f))  # V2


@law_property([SPEC["Awrejcewicz"]])
def test_awrejcewicz_known_values(spec, data):
    p, law, v, f, N, _ = draw_case(data, spec)
    eps, delta, F_s = p["eps"], p["delta"], p["mu_s"] * N
    F, _, _ = call(law, v, f, N)
    ref = np.array([awrejcewicz_reference(*a, delta, eps) for a in zip(v, f, F_s)])
    bad = np.abs(F - ref) > 1e-13 * F_s
    assert not bad.any(), explain(bad, v=v, f=f, N=N, F=F, ref=ref)
    slip = np.abs(v) > eps
    expected = -F_s / (1 + delta * (np.maximum(np.abs(v), eps) - eps)) * np.sign(v)
    np.testing.assert_allclose(F[slip], expected[slip], rtol=1e-14, atol=0)
    # at |v| = eps the band value equals the slip value -F_s sgn(v) whatever f_eq is
    for edge in (eps, -eps):
        at = np.asarray(law(np.full_like(f, edge), f, N))
        np.testing.assert_allclose(at, -F_s * np.sign(edge), rtol=1e-15, atol=0)
        for side in (1 + 1e-12, 1 - 1e-12):
            near = np.asarray(law(np.full_like(f, edge * side), f, N))
            assert np.all(np.abs(near - at) <= 1e-10 * F_s * (1 + delta * eps))


def _threlfall_reference(v, f, N, p):
    a, limit = np.abs(v), p["mu"] * N
    inside = limit * -np.expm1(-3 * np.minimum(a, p["v0"]) / p["v0"]) / NORM
    return -np.sign(v) * np.where(a <= p["v0"], inside, limit + p["viscous"] * (a - p["v0"]))


NUMPY_REFERENCE = {
    "Coulomb": lambda v, f, N, p: np.where(
        v == 0, np.clip(f, -p["mu"] * N, p["mu"] * N), -p["mu"] * N * np.sign(v)
    ),
    "StaticKineticCoulomb": lambda v, f, N, p: np.where(
        v == 0, np.clip(f, -p["mu_s"] * N, p["mu_s"] * N), -p["mu_k"] * N * np.sign(v)
    ),
    "ViscousCoulomb": lambda v, f, N, p: np.where(
        v == 0, np.clip(f, -p["mu"] * N, p["mu"] * N), -p["mu"] * N * np.sign(v) - p["viscous"] * v
    ),
    "Karnopp": lambda v, f, N, p: np.where(
        np.abs(v) < p["eta"],
        np.clip(f, -p["mu_s"] * N, p["mu_s"] * N),
        -(p["mu_s"] if p["mu_k"] is None else p["mu_k"]) * N * np.sign(v),
    ),
    "VelocityLimited": lambda v, f, N, p: -p["mu"] * N * np.clip(v / p["eps"], -1, 1),
    "Threlfall": _threlfall_reference,
}


@law_property([SPEC[name] for name in NUMPY_REFERENCE])
def test_matches_numpy_reference(spec, data):
    p, law, v, f, N, _ = draw_case(data, spec)
    F, B, _ = call(law, v, f, N)
    ref = NUMPY_REFERENCE[str(spec)](v, f, N, p)
    bad = np.abs(F - ref) > 1e-14 * B + 1e-300  # XLA flushes subnormals to zero
    assert not bad.any(), explain(bad, v=v, f=f, N=N, F=F, ref=ref)


# --------------------------------------------------------------------------------------
# 9: creep velocity


@law_property([SPEC["VelocityLimited"], SPEC["Threlfall"]])
def test_creep_velocity_solves_force_balance(spec, data):
    p = data.draw(spec.params(COEF_POS), label="params")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    law, n = spec.cls(**p), N_POINTS
    N = rng.uniform(0.1, 10.0, n)
    limit = p["mu"] * N
    u = rng.uniform(-1.0, 1.0, n)
    u[:4] = [0.0, 1 - 1e-12, -(1 - 1e-12), 0.5]
    f = u * limit
    v_creep = np.asarray(law.creep_velocity(f, N))
    F = np.asarray(law(v_creep, f, N))
    bad = np.abs(F - f) > 1e-12 * limit
    assert not bad.any(), explain(bad, f=f, N=N, v_creep=v_creep, F=F)
    assert np.all(np.abs(v_creep) <= spec.scale(p)) and np.all(v_creep * f <= 0)


# --------------------------------------------------------------------------------------
# 10: parameter validation and traced parameters


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: jf.Coulomb(mu=-1.0), "mu"),
        (lambda: jf.Quinn(eps=0.0), "eps"),
        (lambda: jf.Quinn(eps=-1.0), "eps"),
        (lambda: jf.Quinn(mu=float("nan")), "mu"),
        (lambda: jf.VelocityLimited(eps=float("inf")), "eps"),
        (lambda: jf.Karnopp(eta=0.0), "eta"),
        (lambda: jf.Karnopp(mu_s=0.5, mu_k=0.8), "mu_k"),
        (lambda: jf.Threlfall(v0=0.0), "v0"),
        (lambda: jf.Threlfall(viscous=-1.0), "viscous"),
        (lambda: jf.StaticKineticCoulomb(mu_s=0.5, mu_k=0.8), "mu_k"),
        (lambda: jf.ViscousCoulomb(viscous=-0.1), "viscous"),
        (lambda: jf.Stribeck(v_s=0.0), "v_s"),
        (lambda: jf.Stribeck(delta=0.0), "delta"),
        (lambda: jf.Awrejcewicz(delta=-1.0), "delta"),
        (lambda: jf.Awrejcewicz(eps=0.0), "eps"),
    ],
)
def test_invalid_parameters_raise_naming_the_argument(make, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        make()


def default_params(cls):
    law = cls()
    values = {fld.name: getattr(law, fld.name) for fld in dataclasses.fields(cls)}
    return {k: x for k, x in values.items() if x is not None}


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_traced_parameters_do_not_raise(spec):
    p = default_params(spec.cls)
    eager = float(spec.cls(**p)(0.3 * spec.scale(p), 0.2, 1.0))
    batched = {k: jnp.array([x, x]) for k, x in p.items()}
    out = jax.vmap(lambda q: spec.cls(**q)(0.3 * spec.scale(p), 0.2, 1.0))(batched)
    np.testing.assert_allclose(out, [eager, eager], rtol=1e-15)
    out = jax.jit(lambda q: spec.cls(**q)(0.3 * spec.scale(p), 0.2, 1.0))(p)
    np.testing.assert_allclose(out, eager, rtol=1e-15)
    grads = jax.grad(lambda q: spec.cls(**q)(0.3 * spec.scale(p), 0.2, 1.0))(p)
    assert_finite_tree(grads, str(spec))


@pytest.mark.parametrize(
    "spec",
    SPECS,
    ids=str,
)
def test_result_has_broadcast_shape(spec):
    # base.py: "Every law is broadcasting-elementwise in v, f_eq and normal ... and returns an array
    # of the broadcast shape of the inputs."
    p = default_params(spec.cls)
    law = spec.cls(**p)
    for shapes in [((3, 1), (1, 4), ()), ((), (4,), ()), ((3, 1), (), (1, 4))]:
        v, f, N = (np.full(shape, x) for shape, x in zip(shapes, (0.3 * spec.scale(p), 0.2, 1.0)))
        assert law(v, f, N).shape == np.broadcast_shapes(*shapes), shapes


def test_traced_quinn_example_from_issue():
    out = jax.vmap(lambda mu: jf.Quinn(mu=mu, eps=0.1)(0.3, 0.2, 1.0))(jnp.array([0.1, 0.5]))
    np.testing.assert_allclose(out, [-0.1, -0.5], rtol=1e-15)


def test_threlfall_exact_when_x64_enabled_after_import():
    # the library docs say to enable x64 before comparing with published numbers; doing so after
    # `import jaxfriction` (a common order) leaves Threlfall's 1 - e^-3 in float32
    code = (
        "import jaxfriction as jf, jax, numpy as np; jax.config.update('jax_enable_x64', True);"
        "print(repr(float(jf.threlfall(np.float64(0.05), 0.0, 1.0, 1.0, 0.05))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert abs(float(out) + 1.0) <= 1e-14, out


def test_vector_quinn_derivative_in_mu_at_zero_is_the_one_sided_limit():
    # zeta -> eps f_eq / |f_eq| as mu N -> 0+: d/dmu at mu = 0 is the limit from mu > 0, and a
    # subnormal mu N (whose reciprocal overflows) gives finite values and tangents
    v, f_eq, normal, eps = jnp.array([0.003, -0.001]), jnp.array([0.4, 0.9]), 2.0, 0.01
    d = jax.jacfwd(lambda mu: jf.vector_quinn(v, f_eq, normal, mu, eps))
    h = 1e-9
    one_sided = (jf.vector_quinn(v, f_eq, normal, h, eps) - jf.vector_quinn(v, f_eq, normal, 0.0, eps)) / h
    np.testing.assert_allclose(d(0.0), one_sided, rtol=1e-6)
    np.testing.assert_allclose(d(1e-300), d(0.0), rtol=1e-12)
    assert np.all(np.isfinite(jf.vector_quinn(v, f_eq, normal, 1e-310, eps)))
    # restricted to one axis it is the scalar law, derivative included
    x = jnp.array([0.003, 0.0])
    scalar = jax.jacfwd(lambda mu: jf.quinn(0.003, 0.4, normal, mu, eps))(0.0)
    np.testing.assert_allclose(jax.jacfwd(lambda mu: jf.vector_quinn(x, jnp.array([0.4, 0.0]), normal, mu, eps))(0.0),
                               [scalar, 0.0], rtol=1e-12)
