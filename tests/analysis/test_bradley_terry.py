"""Davidson-Bradley-Terry against a direct numerical optimization (scipy.optimize) of the likelihood written
vote by vote, on synthetic votes with known strengths."""

import math

import numpy as np
import pytest
from pairwise_votes import davidson_judgments, method_outcomes
from scipy.optimize import minimize

from masc_ui.analysis.bootstrap import bootstrap_indices
from masc_ui.analysis.bradley_terry import bradley_terry, davidson_probabilities
from masc_ui.analysis.pairwise_data import PairwiseData
from masc_ui.errors import InputError

THETA = np.array([-1.0, -0.3, 0.2, 1.1])  # sums to 0


def direct_fit(outcomes, methods, ties=True, regularization=0.0):
    """Maximize the likelihood vote by vote with scipy (BFGS): theta of all but the last method free, the last
    = -sum (the sum-zero constraint), and log nu (dropped when there are no ties). Returns theta, nu, loglik."""
    index = {m: k for k, m in enumerate(methods)}
    votes = [(index[left], index[right], None if w is None else index[w]) for w, left, right in outcomes]

    def unpack(x):
        if regularization:
            return x[: len(methods)], (math.exp(x[len(methods)]) if ties else 0.0)
        theta = np.append(x[: len(methods) - 1], -x[: len(methods) - 1].sum())
        return theta, (math.exp(x[len(methods) - 1]) if ties else 0.0)

    def nll(x):
        theta, nu = unpack(x)
        total = 0.0
        for i, j, w in votes:
            pi, pj = math.exp(theta[i]), math.exp(theta[j])
            tie = nu * math.sqrt(pi * pj)
            p = tie if w is None else (pi if w == i else pj)
            total -= math.log(p / (pi + pj + tie))
        return total + 0.5 * regularization * float((theta**2).sum())

    size = len(methods) + (0 if regularization else -1) + (1 if ties else 0)
    res = minimize(nll, np.zeros(size), method="BFGS", options={"gtol": 1e-10})
    theta, nu = unpack(res.x)
    return theta, nu, -nll(res.x) - (-0.5 * regularization * float((theta**2).sum()))


@pytest.mark.parametrize("nu", [0.6, 0.0])
def test_equals_direct_scipy_maximum_likelihood(nu):
    judgments = davidson_judgments(THETA, nu, n_pairs=150, seed=1)
    fit = bradley_terry(PairwiseData.from_records(judgments), "cp", n_boot=0)
    theta, nu_hat, loglik = direct_fit(method_outcomes(judgments), list(fit.methods), ties=nu > 0)
    np.testing.assert_allclose([fit.strength[m].value for m in fit.methods], theta, atol=1e-5)
    assert fit.tie.value == pytest.approx(nu_hat, abs=1e-5)
    assert fit.log_likelihood == pytest.approx(loglik, abs=1e-6)
    assert sum(e.value for e in fit.strength.values()) == pytest.approx(0.0, abs=1e-9)
    assert fit.n_votes == 300 and fit.n_pairs == 150 and fit.n_ties == sum(j["winner"] == "tie" for j in judgments)
    if nu == 0:
        assert fit.tie.value == 0.0


def test_regularized_equals_direct_scipy_map():
    judgments = davidson_judgments(THETA, 0.4, n_pairs=40, seed=2)
    fit = bradley_terry(PairwiseData.from_records(judgments), "cp", n_boot=0, regularization=0.5)
    theta, nu_hat, _ = direct_fit(method_outcomes(judgments), list(fit.methods), regularization=0.5)
    np.testing.assert_allclose([fit.strength[m].value for m in fit.methods], theta, atol=1e-5)
    assert fit.tie.value == pytest.approx(nu_hat, abs=1e-5)


def test_recovers_the_known_ranking():
    judgments = davidson_judgments(THETA, 0.5, n_pairs=2000, raters_per_pair=1, seed=3)
    fit = bradley_terry(PairwiseData.from_records(judgments), "cp", n_boot=200)
    assert fit.methods == ("m0", "m1", "m2", "m3")
    assert [fit.rank[m] for m in fit.methods] == [4, 3, 2, 1]
    np.testing.assert_allclose([fit.strength[m].value for m in fit.methods], THETA, atol=0.15)
    assert fit.tie.value == pytest.approx(0.5, abs=0.1)
    p_win, p_tie, p_lose = fit.probabilities("m3", "m0")
    assert p_win + p_tie + p_lose == pytest.approx(1.0)
    assert (p_win, p_tie, p_lose) == pytest.approx(
        davidson_probabilities(fit.strength["m3"].value, fit.strength["m0"].value, fit.tie.value)
    )
    assert p_win > 0.7


def test_bootstrap_resamples_output_pairs_as_a_hand_written_loop_does():
    judgments = davidson_judgments(THETA, 0.5, n_pairs=60, seed=4)
    fit = bradley_terry(PairwiseData.from_records(judgments), "cp", n_boot=25, seed=9, level=0.8)
    outcomes = method_outcomes(judgments)
    by_pair = {}
    for j, o in zip(judgments, outcomes):
        by_pair.setdefault(tuple(sorted((j["left"], j["right"]))), []).append(o)
    pairs = list(by_pair)  # first-seen order, as the fit numbers its units
    replicates = []
    for idx in bootstrap_indices(len(pairs), 25, 9):
        resampled = [o for k in idx for o in by_pair[pairs[k]]]
        replicates.append(direct_fit(resampled, list(fit.methods))[0])
    replicates = np.array(replicates)
    for k, m in enumerate(fit.methods):
        lo, hi = np.percentile(replicates[:, k], [10, 90])
        assert (fit.strength[m].ci_low, fit.strength[m].ci_high) == pytest.approx((lo, hi), abs=1e-4)
    assert fit.n_boot_undefined == 0


def test_cis_cover_the_true_strengths_at_about_the_nominal_rate():
    hits = total = 0
    for draw in range(80):
        judgments = davidson_judgments(THETA, 0.5, n_pairs=120, seed=1000 + draw)
        fit = bradley_terry(PairwiseData.from_records(judgments), "cp", n_boot=300, seed=draw)
        for k, m in enumerate(fit.methods):
            e = fit.strength[m]
            hits += e.ci_low <= THETA[k] <= e.ci_high
            total += 1
    assert 0.88 <= hits / total <= 0.99  # 320 intervals at a nominal 95%


def votes(*rows):
    """Judgments from (left method, right method, winner) rows, one output pair each."""
    return PairwiseData.from_records(
        [
            {
                "left": f"{k}a",
                "right": f"{k}b",
                "left_method": lm,
                "right_method": rm,
                "winner": w,
                "criterion": "cp",
                "rater": "r",
            }
            for k, (lm, rm, w) in enumerate(rows)
        ]
    )


def test_a_method_that_never_lost_has_no_finite_strength():
    data = votes(("A", "B", "left"), ("B", "C", "left"), ("C", "B", "left"), ("A", "C", "left"))
    fit = bradley_terry(data, "cp", n_boot=50)
    assert all(math.isnan(e.value) for e in fit.strength.values())
    assert "never lost" in fit.reason and "regularization" in fit.reason
    assert all(r is None for r in fit.rank.values())
    regularized = bradley_terry(data, "cp", n_boot=50, regularization=1.0)
    assert regularized.reason is None and regularized.rank["A"] == 1


def test_a_tie_and_a_win_alone_diverge():
    # P(win) P(tie) approaches 1/4 as the gap and nu grow together: no finite maximum although each method
    # "beat or tied" the other.
    fit = bradley_terry(votes(("A", "B", "left"), ("A", "B", "tie")), "cp", n_boot=0)
    assert fit.reason is not None and "diverge" in fit.reason


def test_only_ties():
    fit = bradley_terry(votes(("A", "B", "tie"), ("B", "C", "tie")), "cp", n_boot=0)
    assert "every vote is a tie" in fit.reason


def test_undefined_resamples_are_counted():
    # A cycle A > B > C > A: some resamples lose an edge and are undefined.
    data = votes(("A", "B", "left"), ("B", "C", "left"), ("C", "A", "left"), ("A", "B", "left"))
    fit = bradley_terry(data, "cp", n_boot=200)
    assert fit.reason is None and 0 < fit.n_boot_undefined < 200
    assert not math.isnan(fit.strength["A"].ci_low)


def test_same_method_and_unknown_method_votes_are_left_out():
    data = PairwiseData.from_records(
        [
            {
                "left": "1a",
                "right": "1b",
                "left_method": "A",
                "right_method": "B",
                "winner": "left",
                "criterion": "cp",
                "rater": "r",
            },
            {
                "left": "2a",
                "right": "2b",
                "left_method": "B",
                "right_method": "A",
                "winner": "left",
                "criterion": "cp",
                "rater": "r",
            },
            {
                "left": "3a",
                "right": "3b",
                "left_method": "A",
                "right_method": "A",
                "winner": "left",
                "criterion": "cp",
                "rater": "r",
            },
            {"left": "4a", "right": "4b", "left_method": "A", "winner": "right", "criterion": "cp", "rater": "r"},
        ]
    )
    fit = bradley_terry(data, "cp", n_boot=0)
    assert fit.n_votes == 2 and fit.n_excluded == 2 and fit.methods == ("A", "B")
    assert fit.strength["A"].value == pytest.approx(0.0, abs=1e-9)  # one win each


def test_elo_scale():
    fit = bradley_terry(PairwiseData.from_records(davidson_judgments(THETA, 0.5, 100, seed=5)), "cp", n_boot=20)
    scaled = fit.elo_scale()
    for m, e in fit.strength.items():
        assert scaled[m].value == pytest.approx(1000 + 400 * e.value / math.log(10))
        assert scaled[m].ci_low == pytest.approx(1000 + 400 * e.ci_low / math.log(10))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"criterion": "pf"}, "no pairwise judgments for criterion 'pf'"),
        ({"regularization": -1.0}, "regularization"),
        ({"n_boot": 10**6}, "at most"),
    ],
)
def test_errors(kwargs, match):
    data = PairwiseData.from_records(davidson_judgments(THETA, 0.5, 10, seed=6))
    with pytest.raises(InputError, match=match):
        bradley_terry(data, **{"criterion": "cp", **kwargs})


def test_no_vote_between_two_methods():
    data = votes(("A", "A", "left"))
    with pytest.raises(InputError, match="two different known methods"):
        bradley_terry(data, "cp")


def test_finite_or_not_as_a_direct_optimization_finds_on_random_small_vote_sets():
    rng = np.random.default_rng(0)
    finite_seen = infinite_seen = 0
    for _trial in range(80):
        n_methods = int(rng.integers(2, 4))
        rows, outcomes = [], []
        for _k in range(int(rng.integers(2, 7))):
            i, j = rng.choice(n_methods, size=2, replace=False)
            winner = str(rng.choice(["left", "right", "tie"]))
            rows.append((f"M{i}", f"M{j}", winner))
            outcomes.append((None if winner == "tie" else f"M{i if winner == 'left' else j}", f"M{i}", f"M{j}"))
        if all(o[0] is None for o in outcomes):
            continue
        fit = bradley_terry(votes(*rows), "cp", n_boot=0)
        ties = any(o[0] is None for o in outcomes)
        with np.errstate(all="ignore"):
            theta, nu, _ = direct_fit(outcomes, list(fit.methods), ties=ties)
        spread = max(np.abs(theta).max(), abs(math.log(nu)) if ties else 0.0)
        if fit.reason is None:
            finite_seen += 1
            np.testing.assert_allclose([fit.strength[m].value for m in fit.methods], theta, atol=1e-3)
        else:
            infinite_seen += 1
            assert spread > 6, (rows, fit.reason)  # the direct optimizer ran far off as well
    assert finite_seen > 10 and infinite_seen > 10
