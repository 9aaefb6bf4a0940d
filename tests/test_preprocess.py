"""Pre-processing of lab records (resample_record, detrend, remove_offset), checked against
closed forms and numpy/scipy on hand-made records."""

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import pytest
from scipy.interpolate import PchipInterpolator
from test_rate_state_fit import radau_friction

import jaxfriction as jf
from jaxfriction._workflows.fit.preprocess import finest_interval, resample_values


def two_rate_times(t_switch=10.0, t_end=14.0):
    """A logger at 10 Hz until ``t_switch``, then 100 Hz (the basalt velocity-step file)."""
    slow = np.arange(0.0, t_switch, 0.1)
    fast = t_switch + 0.01 * np.arange(int(round((t_end - t_switch) / 0.01)) + 1)
    return np.concatenate([slow, fast])


def signal(t):
    return 0.6 + 0.01 * np.sin(0.7 * t) + 2e-3 * t


def test_two_rate_record_resampled_onto_the_fine_grid_matches_the_continuous_signal():
    t = two_rate_times()
    record = jf.resample_record(t, {"mu": signal(t)}, name="basalt")
    assert record.interval == pytest.approx(0.01, rel=1e-12) and len(record) == 1401
    assert record.t[0] == 0.0 and record.t[-1] == pytest.approx(14.0)
    err = np.abs(record.channels["mu"] - signal(record.t))
    # linear interpolation error bound h^2 / 8 max|f''| on the 10 Hz part (h = 0.1), exact at the samples
    bound = 0.1**2 / 8 * 0.01 * 0.7**2
    assert err.max() <= bound and err.max() > 0.3 * bound  # measured 0.98 of the bound
    assert err[record.t >= 10.0].max() < 1e-13  # the 100 Hz part: the samples themselves
    # pchip: scipy's interpolant; third-order where the signal is monotone, flat at its extrema (Fritsch-Carlson)
    pchip = jf.resample_record(t, {"mu": signal(t)}, method="pchip")
    np.testing.assert_allclose(pchip.channels["mu"], PchipInterpolator(t, signal(t))(pchip.t), rtol=0, atol=1e-15)
    pchip_err = np.abs(pchip.channels["mu"] - signal(pchip.t))
    assert pchip_err.max() < bound and np.median(pchip_err) < 0.1 * np.median(err)
    assert len(record.preprocessing) == 1 and "intervals 0.01 to 0.1" in record.preprocessing[0]
    assert "dt = 0.01" in record.preprocessing[0] and "linear" in record.preprocessing[0]


def test_downsampling_averages_over_dt_keeps_lines_and_removes_what_would_alias():
    t = two_rate_times()
    line = 0.6 + 3e-3 * t
    coarse = jf.resample_record(t, {"mu": line, "q": 2.0 * t}, dt=0.1)
    assert len(coarse) == 141 and coarse.q_dofs == (0,)
    # a moving average over a symmetric window keeps a straight line exactly
    # (to the round-off of differences of the antiderivative, ~1e-15 * max|F| / dt)
    np.testing.assert_allclose(coarse.channels["mu"], 0.6 + 3e-3 * coarse.t, rtol=0, atol=2e-13)
    np.testing.assert_allclose(coarse.q[:, 0], 2.0 * coarse.t, rtol=0, atol=1e-12)
    # 20 Hz in the 100 Hz part: above the new Nyquist frequency (5 Hz). Point sampling aliases
    # it to full amplitude; the moving average of width 0.1 s (two periods) removes it
    wiggle = 0.01 * np.sin(2 * np.pi * 20.0 * (t - 10.0) + 0.3) * (t >= 10.0)
    averaged = jf.resample_record(t, {"mu": line + wiggle}, dt=0.1)
    sampled = jf.resample_record(t, {"mu": line + wiggle}, dt=0.1, antialias=False)
    after = (averaged.t > 10.05) & (averaged.t < 13.95)  # the end point has no window left: its sample
    assert np.abs(averaged.channels["mu"] - (0.6 + 3e-3 * averaged.t))[after].max() < 2e-13
    assert np.abs(sampled.channels["mu"] - (0.6 + 3e-3 * sampled.t))[after].max() == pytest.approx(
        0.01 * np.sin(0.3), rel=1e-9)
    # white noise in the 100 Hz part: the mean of 10 samples (and half of each end sample)
    rng = np.random.default_rng(1)
    noisy = jf.resample_record(t, {"mu": line + 1e-3 * rng.standard_normal(t.size) * (t >= 10.0)}, dt=0.1)
    assert 0.25e-3 < np.std(noisy.channels["mu"][after] - (0.6 + 3e-3 * noisy.t[after])) < 0.4e-3


def test_resample_values_against_a_direct_numpy_average():
    t = np.sort(np.random.default_rng(2).uniform(0.0, 1.0, 200))
    y = np.cos(3.0 * t)
    grid = np.linspace(0.1, 0.9, 9)
    got = resample_values(t, y, grid)
    for g, value in zip(grid, got):  # mean of the piecewise linear interpolant over [g - 0.05, g + 0.05]
        fine = np.linspace(g - 0.05, g + 0.05, 200_001)
        assert value == pytest.approx(np.trapezoid(np.interp(fine, t, y), fine) / 0.1, rel=0, abs=1e-11)


def test_inputs_keep_their_stamps_and_dt_defaults_to_the_finest_interval():
    t = two_rate_times()
    jitter = t + 1e-5 * np.random.default_rng(3).uniform(-1, 1, t.size)
    assert finest_interval(jitter) == pytest.approx(0.01, abs=2e-5)
    load = np.where(t < 10.0, 1.0, 10.0)
    record = jf.resample_record(t, {"mu": signal(t)}, inputs={"load": load}, t0=1.0, t1=12.0)
    assert record.t[0] == 1.0 and record.t[-1] == pytest.approx(12.0)
    np.testing.assert_array_equal(record.input_t, t)
    np.testing.assert_array_equal(record.inputs["load"], load)


def test_resample_record_rejects_bad_input():
    t = two_rate_times()
    with pytest.raises(ValueError, match="t must be strictly increasing"):
        jf.resample_record(t[::-1], {"mu": signal(t)})
    with pytest.raises(ValueError, match="columns"):
        jf.resample_record(t, {})
    with pytest.raises(ValueError, match=r"columns\['mu'\] must be finite"):
        jf.resample_record(t, {"mu": np.where(t > 3, np.nan, 1.0)})
    with pytest.raises(ValueError, match="columns: names"):
        jf.resample_record(t, {"Mu Value": signal(t)})
    with pytest.raises(ValueError, match="method"):
        jf.resample_record(t, {"mu": signal(t)}, method="cubic")
    with pytest.raises(ValueError, match="dt"):
        jf.resample_record(t, {"mu": signal(t)}, dt=-1.0)
    with pytest.raises(ValueError, match="t0, t1"):
        jf.resample_record(t, {"mu": signal(t)}, t0=-1.0)


def test_detrend_removes_an_exact_linear_trend_in_time_or_slip_to_round_off():
    t = np.linspace(0.0, 40.0, 401)
    slip = np.where(t < 10.0, t, 10.0 + 10.0 * (t - 10.0))  # the load point's displacement (um)
    shape = 0.6 + 0.005 * np.tanh(t - 10.0) * (t > 10.0)
    # the load-point velocity input: 1 um/s, then 10 um/s from 10 s (a jump over 1e-9 s)
    V = {"load": np.array([1.0, 1.0, 10.0, 10.0])}
    record = jf.Measurement(t=t, channels={"mu": shape - 1.2e-4 * slip}, inputs=V,
                            input_t=np.array([0.0, 10.0, 10.0 + 1e-9, 40.0]))
    # fitted over the steady sliding before the step, where the shape is flat: the trend exactly
    clean = jf.detrend(record, "mu", against="slip", window=(0.0, 10.0))
    np.testing.assert_allclose(clean.channels["mu"], shape, rtol=0, atol=1e-12)
    assert "linearly in load-point slip fitted over 0 <= t <= 10" in clean.preprocessing[-1]
    assert "slope -0.00012 per unit slip" in clean.preprocessing[-1]
    # the slip as a given array, the same; a given slope, the same
    np.testing.assert_allclose(jf.detrend(record, "mu", against=slip, window=(None, 10.0)).channels["mu"], shape,
                               rtol=0, atol=1e-14)
    given = jf.detrend(record, "mu", against=slip, slope=-1.2e-4, label="load-point slip")
    np.testing.assert_allclose(given.channels["mu"], shape, rtol=0, atol=1e-14)
    assert "given slope -0.00012" in given.preprocessing[-1]
    # in time, with numpy's least-squares line over the whole record as the reference
    positions = jf.Measurement(t=t, q=np.column_stack([np.sin(t), 3.0 + 0.5 * t]), q_dofs=(0, 1))
    flat = jf.detrend(positions, "q1")
    np.testing.assert_allclose(flat.q[:, 1], 3.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(flat.q[:, 0], np.sin(t))
    coef = np.polyfit(t, np.sin(t), 2)
    quad = jf.detrend(positions, "q0", order=2)
    np.testing.assert_allclose(quad.q[:, 0], np.sin(t) - np.polyval(coef, t) + np.polyval(coef, 0.0), atol=1e-12)
    # steps accumulate, and window/decimate keep them
    both = jf.remove_offset(flat, "q1", value=3.0)
    assert len(both.preprocessing) == 2 and both.decimate(2).preprocessing == both.preprocessing
    assert both.window(1.0, 5.0).preprocessing == both.preprocessing
    np.testing.assert_allclose(both.q[:, 1], 0.0, atol=1e-12)


def test_remove_offset_by_window_mean_and_bad_arguments():
    t = np.linspace(0.0, 10.0, 101)
    record = jf.Measurement(t=t, channels={"mu": 0.65 + 0.01 * (t > 5.0)})
    out = jf.remove_offset(record, "mu", window=(0.0, 4.0))
    np.testing.assert_allclose(out.channels["mu"], 0.01 * (t > 5.0), atol=1e-15)
    assert out.preprocessing == ("removed offset 0.65 from mu (its mean over 0 <= t <= 4)",)
    assert record.preprocessing == ()
    with pytest.raises(ValueError, match="channel 'friction' is not measured"):
        jf.remove_offset(record, "friction", value=1.0)
    with pytest.raises(ValueError, match="window: give value or window"):
        jf.remove_offset(record, "mu", value=1.0, window=(0, 1))
    with pytest.raises(ValueError, match="window"):
        jf.remove_offset(record, "mu", window=(20.0, 30.0))
    with pytest.raises(ValueError, match="against='slip'"):
        jf.detrend(record, "mu", against="slip")
    with pytest.raises(ValueError, match="against must have shape"):
        jf.detrend(record, "mu", against=t[:-1])
    with pytest.raises(ValueError, match="order=1"):
        jf.detrend(record, "mu", slope=1.0, order=2)
    with pytest.raises(ValueError, match="preprocessing must be a tuple of strings"):
        jf.Measurement(t=t, channels={"mu": t}, preprocessing="raw")



@pytest.mark.slow  # ~25 s CPU, most of it compiling the slider's forward-mode Jacobian for LM
def test_preprocessing_sensitivity_flags_a_slip_trend_that_outweighs_the_standard_error_of_a_minus_b():
    ts = np.linspace(0.0, 40.0, 401)
    slip = np.where(ts < 10.0, ts, 10.0 + 10.0 * (ts - 10.0))  # load-point displacement (um)
    # the velocity step plus a slip-weakening drift of the gouge, and noise
    mu = radau_friction(ts) - 2e-5 * slip + 1e-4 * np.random.default_rng(0).standard_normal(ts.size)
    law = jf.RateState(a=0.005, b=0.01, D_c=10.0, mu_0=0.6, V_0=1.0, evolution="aging", form="log")
    slider = jf.QuasiStaticSlider(law=law, load=jf.Steps((1.0, 10.0), (10.0,)), stiffness=1e-3, normal=1.0)
    raw = jf.Measurement(t=ts, channels={"mu": mu}, y0=np.asarray(slider.steady_sliding()), name="raw")
    variants = {
        "raw": raw,
        "detrended, given": jf.detrend(raw, "mu", against=slip, slope=-2e-5, label="load-point slip"),
        "detrended, fitted before the step": jf.detrend(raw, "mu", against=slip, window=(0.0, 10.0),
                                                        label="load-point slip"),
    }
    start = {"law.a": 0.004, "law.b": 0.012, "law.D_c": 12.0}

    def fit(record):
        return jf.fit(slider, start, record, optimizer="lm")

    with pytest.warns(jf.FitWarning, match="pre-processing choice moves a - b"):
        check = jf.preprocessing_sensitivity(fit, variants, lambda p: p["law.a"] - p["law.b"], name="a - b")
    assert check.outweighs and check.spread_in_stderr > 3.0  # measured 4.2
    truth = 0.005 - 0.01
    given = "detrended, given"
    # the record detrended by the true slope: a - b within 2 standard errors of the truth
    assert abs(check.values[given] - truth) < 2.0 * check.stderr[given]
    # the raw record: biased by many of its own standard errors
    assert abs(check.values["raw"] - truth) > 3.0 * check.stderr["raw"]
    # the independent check of the delta method: var(a - b) = var a + var b - 2 cov(a, b)
    res = check.results[given]
    i, j = res.names.index("law.a"), res.names.index("law.b")
    c = res.covariance
    assert np.sqrt(c[i, i] + c[j, j] - 2 * c[i, j]) == pytest.approx(
        res.derived(lambda p: p["law.a"] - p["law.b"]).stderr, rel=1e-9)
    assert check.preprocessing[given] == ("detrended mu linearly in load-point slip by a given slope -2e-05 per unit "
                                          "slip",)
    assert "a - b" in check.summary() and check.message in check.summary()
    print(check.summary())
