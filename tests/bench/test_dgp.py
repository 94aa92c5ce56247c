"""The paper's six Monte Carlo DGPs: shapes, seeds, functional forms, noise scaling."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from attnreg.bench.dgp import DGPS, P, signal, simulate
from attnreg.exceptions import OptionError


@pytest.mark.parametrize("dgp", list(DGPS))
def test_shapes_and_support(dgp: str) -> None:
    sim = simulate(dgp, 123, 2.0, n_test=45, seed=3)
    assert sim.X_train.shape == (123, P) and sim.X_test.shape == (45, P)
    for arr, n in ((sim.y_train, 123), (sim.f_train, 123), (sim.y_test, 45), (sim.f_test, 45)):
        assert arr.shape == (n,) and np.all(np.isfinite(arr))
    both = np.vstack([sim.X_train, sim.X_test])
    assert both.min() >= 0.0 and both.max() < 1.0
    assert (sim.dgp, sim.snr, sim.seed) == (dgp, 2.0, 3)


@pytest.mark.parametrize("dgp", list(DGPS))
def test_seed_reproducibility(dgp: str) -> None:
    a, b = simulate(dgp, 50, 1.0, seed=11), simulate(dgp, 50, 1.0, seed=11)
    c = simulate(dgp, 50, 1.0, seed=12)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.X_train, c.X_train)


@pytest.mark.parametrize("dgp", list(DGPS))
@pytest.mark.parametrize("snr", [0.5, 1.0, 2.0, 3.0])
def test_noise_variance_matches_snr(dgp: str, snr: float) -> None:
    sim = simulate(dgp, 40_000, snr, n_test=10_000, seed=5)
    f = np.concatenate([sim.f_train, sim.f_test])
    y = np.concatenate([sim.y_train, sim.y_test])
    # the noise sd is set from the sample variance (ddof=0) of the whole draw's signal
    assert sim.noise_sd == pytest.approx(np.sqrt(np.var(f) / snr), rel=1e-12)
    empirical = np.var(f) / np.var(y - f)
    assert empirical == pytest.approx(snr, rel=0.03)
    # the best possible R² is then SNR / (1 + SNR)
    assert 1 - np.var(y - f) / np.var(y) == pytest.approx(snr / (1 + snr), abs=0.01)


def test_functional_forms_at_known_points() -> None:
    half = np.full((1, P), 0.5)
    ones = np.ones((1, P))
    assert signal("linear", half)[0] == pytest.approx(0.0)
    assert signal("linear", ones)[0] == pytest.approx(0.5 * (2 - 1 + 3 + 1.5 + 0.5))
    assert signal("friedman1", half)[0] == pytest.approx(10 * np.sin(np.pi / 4) + 5 + 2.5)
    assert signal("friedman2", half)[0] == pytest.approx(np.sin(1.5 * np.pi) + np.log(1.25))
    assert signal("friedman3", half)[0] == pytest.approx(0.25 + np.log(3.0))
    assert signal("rotated_sine", half)[0] == pytest.approx(np.sin(6.0))
    assert signal("soft_radial", half)[0] == pytest.approx(1.0)
    assert signal("soft_radial", ones)[0] == pytest.approx(1 / (1 + 5 * 5 * 0.25))
    # x5 does not enter friedman2, friedman3 or rotated_sine
    x = np.random.default_rng(0).uniform(size=(10, P))
    x2 = x.copy()
    x2[:, 4] = 1 - x2[:, 4]
    for name in ("friedman2", "friedman3", "rotated_sine"):
        np.testing.assert_allclose(signal(name, x), signal(name, x2))


def test_train_and_test_come_from_one_draw() -> None:
    sim = simulate("linear", 30, 1.0, n_test=20, seed=9)
    whole = simulate("linear", 50, 1.0, n_test=1, seed=9)
    np.testing.assert_array_equal(sim.X_train, whole.X_train[:30])
    np.testing.assert_array_equal(sim.X_test, whole.X_train[30:50])


def test_bad_arguments() -> None:
    with pytest.raises(OptionError, match="dgp must be one of"):
        simulate("friedman4", 10, 1.0)
    with pytest.raises(OptionError, match="snr"):
        simulate("linear", 10, 0.0)
    with pytest.raises(OptionError, match="n_train"):
        simulate("linear", 0, 1.0)


def test_bench_modules_do_not_import_torch() -> None:
    code = "import sys, attnreg.bench.dgp, attnreg.bench.montecarlo; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_montecarlo_small_grid() -> None:
    from attnreg.bench.montecarlo import format_table, run_montecarlo, summarise

    def mean_only(x, y, x_new, seed):  # type: ignore[no-untyped-def]
        return np.full(len(x_new), y.mean())

    res = run_montecarlo(["linear", "soft_radial"], ns=[60], snrs=[1.0, 3.0], reps=2,
                         methods={"ols": "ols", "mean": mean_only}, seed=7, n_test=200)
    assert list(res.columns) == ["dgp", "n", "snr", "rep", "seed", "method", "r2", "seconds"]
    assert len(res) == 2 * 2 * 2 * 2 and set(res["seed"]) == {7, 1007}
    lin = summarise(res[res.dgp == "linear"], "snr")
    assert (lin["ols"] > 0.35).all() and (lin["mean"] < 0.05).all()
    again = run_montecarlo(["linear"], ns=[60], snrs=[1.0], reps=1, methods=["ols"], seed=7, n_test=200)
    first = res.query("dgp == 'linear' and snr == 1.0 and rep == 0 and method == 'ols'")
    assert again["r2"].iloc[0] == first["r2"].iloc[0]
    text = format_table(res)
    assert "overall" in text and "seeds: [7, 1007]" in text
    with pytest.raises(OptionError, match="method must be one of"):
        run_montecarlo(["linear"], ns=[60], snrs=[1.0], reps=1, methods=["svm"])
    with pytest.raises(OptionError, match="dgps must be drawn from"):
        run_montecarlo(["cubic"], ns=[60], snrs=[1.0], reps=1, methods=["ols"])
