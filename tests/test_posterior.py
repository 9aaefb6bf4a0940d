"""sample_posterior: NUTS draws against posteriors known in closed form, its priors, its errors.

The Gaussian problem: a frictionless free mass (``normal = 0``, no spring, no damper) pushed
by a constant force ``F``: ``x(t) = F t^2 / (2 m)`` from rest, linear in ``F``, and RK4 is
exact for it (a quadratic in t), so the fitted model is exactly linear. Under the flat prior
of an unbounded parameter the posterior of ``F`` with known noise ``sigma`` is Gaussian with
the least-squares mean and variance ``sigma^2 / sum phi_i^2``, ``phi_i = t_i^2 / (2 m)``;
with ``sigma`` unknown under the Jeffreys prior, ``sigma^2`` is scaled-inverse-chi^2 with
``n - 1`` degrees of freedom and scale ``RSS / (n - 1)``.
"""

import dataclasses
import math
import re
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("blackjax")
az = pytest.importorskip("arviz")

import jaxfriction as jf

NOISE, MASS, F_TRUE = 0.05, 1.0, 2.0
DOC = Path(__file__).resolve().parents[1] / "docs" / "howto" / "posterior.md"


def _push(force=F_TRUE):
    law = jf.Quinn(mu=0.5, eps=0.01)  # normal = 0: no friction force
    return jf.Oscillator(law=law, force=jf.Constant(force), mass=MASS, stiffness=0.0, damping=0.0, normal=0.0)


@pytest.fixture(scope="module")
def record():
    traj = jf.simulate(_push(), jnp.zeros(2), 0.0, 4.0, 0.01)  # 401 samples
    return jf.Measurement.from_trajectory(traj, noise=NOISE, seed=3, known_y0=True)


@pytest.fixture(scope="module")
def free_fit(record):
    return jf.fit(_push(1.5), {"force.value": 1.5}, record, bounds={"force.value": None}, optimizer="lm")


def _exact(record):
    """Least-squares ``F``, ``sum phi^2`` and the residual sum of squares."""
    phi, q = record.t**2 / (2 * MASS), record.q[:, 0]
    s = float(phi @ phi)
    f_hat = float(phi @ q) / s
    return f_hat, s, float(np.sum((q - f_hat * phi) ** 2))


def _within_mc_error(idata, name, mean, std, k=4.0):
    """Sample mean and standard deviation within ``k`` Monte-Carlo standard errors (ESS-based,
    the delta method for the standard deviation: ArviZ's ``mcse(method="sd")``, written out)."""
    x = idata.posterior[name].values
    mcse_mean = x.std() / math.sqrt(float(az.ess(x, method="mean")))
    c2 = (x - x.mean()) ** 2
    var_var = (np.mean(c2**2) - np.mean(c2) ** 2) / float(az.ess(c2, method="mean"))
    mcse_sd = math.sqrt(var_var / np.mean(c2) / 4)
    assert abs(x.mean() - mean) < k * mcse_mean, (x.mean(), mean, mcse_mean)
    assert abs(x.std() - std) < k * mcse_sd, (x.std(), std, mcse_sd)


def _converged(idata, names):
    summary = az.summary(idata, var_names=names, kind="diagnostics", round_to="none")
    assert float(summary["r_hat"].max()) < 1.01, summary
    assert float(summary["ess_bulk"].min()) > 400, summary
    assert int(idata.sample_stats["diverging"].sum()) == 0


def test_known_noise_gives_the_gaussian_posterior(record, free_fit):
    f_hat, s, _ = _exact(record)
    assert free_fit.params["force.value"] == pytest.approx(f_hat, rel=1e-8)
    idata = jf.sample_posterior(free_fit, draws=500, warmup=500, chains=4, noise=NOISE, seed=1)
    assert set(idata.posterior.data_vars) == {"force.value"}
    assert idata.posterior["force.value"].shape == (4, 500)
    _within_mc_error(idata, "force.value", f_hat, NOISE / math.sqrt(s))
    _converged(idata, ["force.value"])
    expected = {"diverging", "acceptance_rate", "step_size", "tree_depth", "n_steps", "energy", "lp"}
    assert expected <= set(idata.sample_stats)
    assert idata.attrs["sampler"] == "blackjax NUTS"
    assert idata.attrs["warmup"] == 500 and idata.attrs["seed"] == 1
    assert idata.attrs["noise"] == NOISE


def test_sampled_noise_matches_the_jeffreys_posterior(record, free_fit):
    f_hat, s, rss = _exact(record)
    n = len(record)
    idata = jf.sample_posterior(free_fit, draws=500, warmup=500, chains=4, seed=2)
    assert set(idata.posterior.data_vars) == {"force.value", "sigma"}
    # sigma^2 ~ scaled-inv-chi^2(n - 1, RSS / (n - 1)): E sigma^k = (RSS / 2)^(k/2) G((n-1-k)/2) / G((n-1)/2)
    moment = [math.sqrt(rss / 2) ** k * math.exp(math.lgamma((n - 1 - k) / 2) - math.lgamma((n - 1) / 2))
              for k in (1, 2)]
    _within_mc_error(idata, "sigma", moment[0], math.sqrt(moment[1] - moment[0] ** 2))
    assert float(idata.posterior["sigma"].mean()) == pytest.approx(NOISE, rel=0.05)
    # F: Student t with n - 1 degrees of freedom, scale sqrt(RSS / (n - 1) / s)
    t_sd = math.sqrt(rss / (n - 1) / s * (n - 1) / (n - 3))
    _within_mc_error(idata, "force.value", f_hat, t_sd)
    _converged(idata, ["force.value", "sigma"])
    assert idata.attrs["noise"] == "sampled"


def test_interval_prior_is_uniform(record):
    lo, hi = 0.5, 4.0
    result = jf.fit(_push(1.5), {"force.value": 1.5}, record, bounds={"force.value": (lo, hi)},
                    optimizer="lm")
    idata = jf.sample_posterior(result, draws=1000, warmup=500, chains=4, noise=1e6, seed=3)
    x = idata.posterior["force.value"]
    assert float(x.min()) > lo and float(x.max()) < hi
    _within_mc_error(idata, "force.value", (lo + hi) / 2, (hi - lo) / math.sqrt(12))
    _converged(idata, ["force.value"])


def test_bounds_give_a_uniform_prior_on_a_half_line_parameter(record):
    # default bounds: positive, a log-uniform (improper) prior; bounds= makes it uniform on (1, 3)
    result = jf.fit(_push(1.5), {"force.value": 1.5}, record, optimizer="lm")
    assert result.problem.kinds == ("lower",)
    idata = jf.sample_posterior(result, draws=1000, warmup=500, chains=4, noise=1e6, seed=4,
                                bounds={"force.value": (1.0, 3.0)})
    x = idata.posterior["force.value"]
    assert float(x.min()) > 1.0 and float(x.max()) < 3.0
    _within_mc_error(idata, "force.value", 2.0, 2.0 / math.sqrt(12))
    _converged(idata, ["force.value"])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"draws": 0}, "draws"),
        ({"draws": 10.0}, "draws"),
        ({"warmup": -1}, "warmup"),
        ({"chains": True}, "chains"),
        ({"seed": 1.5}, "seed"),
        ({"noise": 0.0}, "noise"),
        ({"noise": -1.0}, "noise"),
        ({"noise": float("nan")}, "noise"),
        ({"noise": float("inf")}, "noise"),
        ({"bounds": {"law.mu": (0.0, 1.0)}}, "bounds"),
        ({"bounds": {"force.value": (3.0, 1.0)}}, "bounds"),
        ({"bounds": {"force.value": (2.5, 3.0)}}, "bounds"),
        ({"bounds": {"force.value": 1.0}}, "bounds"),
        ({"bounds": [1.0, 3.0]}, "bounds"),
    ],
)
def test_bad_arguments_raise_naming_them(free_fit, kwargs, name):
    with pytest.raises(ValueError, match=name):
        jf.sample_posterior(free_fit, **kwargs)


def test_bounds_must_lie_within_the_fits_bounds(record):
    result = jf.fit(_push(1.5), {"force.value": 1.5}, record, bounds={"force.value": (0.5, 4.0)},
                    optimizer="lm")
    with pytest.raises(ValueError, match="bounds"):
        jf.sample_posterior(result, bounds={"force.value": (0.0, 3.0)})


def test_result_must_be_a_fit_result_with_its_problem(free_fit):
    with pytest.raises(ValueError, match="result"):
        jf.sample_posterior(free_fit.to_dict())
    with pytest.raises(ValueError, match="result"):
        jf.sample_posterior(dataclasses.replace(free_fit, problem=None))


def test_missing_extra_names_it(free_fit, monkeypatch):
    monkeypatch.setitem(sys.modules, "blackjax", None)
    with pytest.raises(ImportError, match=re.escape("pip install jaxfriction[bayes]")):
        jf.sample_posterior(free_fit, noise=NOISE)


def test_the_howto_example_runs():
    text = DOC.read_text()
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL))
    namespace = {"__name__": "posterior_example"}
    exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 - the documented example
    result, idata = namespace["result"], namespace["idata"]
    mu = idata.posterior["law.mu"].values.ravel()
    lo, hi = np.percentile(mu, [2.5, 97.5])
    # the page's numbers: the fit's estimate and stderr, the posterior mean within Monte-Carlo
    # error (both runs are random: 5 standard errors of one), the posterior's 95 % interval
    # positive where the Gauss-Newton interval is not
    fitted = re.search(r"^law\.mu\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%", text, flags=re.MULTILINE).groups()
    sampled = re.search(r"^law\.mu" + r"\s+([\d.]+)" * 5 + r"\s", text, flags=re.MULTILINE).groups()
    assert result.params["law.mu"] == pytest.approx(float(fitted[0]), rel=1e-3)
    assert result.stderr["law.mu"] == pytest.approx(float(fitted[1]), rel=1e-2)
    assert abs(mu.mean() - float(sampled[0])) < 5 * float(sampled[4])
    assert mu.std() == pytest.approx(float(sampled[1]), rel=0.1)
    assert result.params["law.mu"] - 1.96 * result.stderr["law.mu"] < 0 < lo < hi
    assert mu.mean() > result.params["law.mu"]
    _converged(idata, ["law.mu"])
