import jax

jax.config.update("jax_enable_x64", True)

import pytest

from jaxfriction._reference import den_hartog_response
from jaxfriction._reproduce import quinn_fig7


@pytest.mark.slow
def test_quinn_fig7_full():
    """Fig. 7 at the paper's resolution: 49 transient cycles, D in cycle 50, dt 0.1 .. 0.001."""
    r = quinn_fig7()
    a, b = r["cases"]["a_sticking"]["laws"], r["cases"]["b_no_sticking"]
    assert 1.9 < a["quinn"]["order"] < 2.1 and 1.9 < a["quinn_eps_dt"]["order"] < 2.1
    assert 0.9 < a["classical"]["order"] < 1.3 and 0.9 < a["velocity_limited"]["order"] < 1.1
    # without sticking the regularized laws converge at order 1 (O(eps) reversal error, eps ~ dt)
    assert 0.9 < b["laws"]["quinn"]["order"] < 1.1 and 0.9 < b["laws"]["velocity_limited"]["order"] < 1.1
    # the exact non-sticking steady state is Den Hartog's: D = 4 mu N X
    x, _ = den_hartog_response(2.5, 0.8, 1.0)
    assert abs(b["D_exact"] / (4 * x) - 1) < 1e-9
