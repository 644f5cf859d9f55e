"""Metric pairwise accuracy against a direct count."""

import math

import numpy as np
import pytest

from masc_ui.analysis.bootstrap import bootstrap_indices
from masc_ui.analysis.pairwise_accuracy import pairwise_accuracy
from masc_ui.analysis.pairwise_data import PairwiseData
from masc_ui.errors import InputError


def synthetic(seed=0, n_pairs=120):
    """Pairs of samples with a latent quality; raters prefer the better one most of the time; metric `good`
    tracks the quality, `dist` is its negation (lower is better), `coarse` is rounded (ties), `sparse` has holes."""
    rng = np.random.default_rng(seed)
    judgments, values, truth = [], {}, {}
    for p in range(n_pairs):
        a, b = f"p{p}a", f"p{p}b"
        qa, qb = rng.random(), rng.random()
        truth[a], truth[b] = qa, qb
        for s, q in ((a, qa), (b, qb)):
            good = q + rng.normal(scale=0.2)
            values[s] = {"good": good, "dist": -good, "coarse": round(q), "sparse": None if rng.random() < 0.2 else q}
        for r in range(int(rng.integers(1, 4))):
            u = rng.random()
            better_a = (qa > qb) == (u < 0.8)
            winner_sample = a if better_a else b
            left, right = (a, b) if rng.random() < 0.5 else (b, a)
            winner = "tie" if u > 0.93 else ("left" if winner_sample == left else "right")
            for criterion in ("cp", "pf"):
                judgments.append(
                    {"left": left, "right": right, "criterion": criterion, "winner": winner, "rater": f"r{r}"}
                )
    return PairwiseData.from_records(judgments), values, judgments


def direct(judgments, values, metric, criterion, higher=True):
    """Loop over pairs: majority of decisive votes, metric comparison, 1 / 0 / 0.5."""
    tally = {}
    for j in judgments:
        if j["criterion"] != criterion:
            continue
        pair = tuple(sorted((j["left"], j["right"])))
        counts = tally.setdefault(pair, {pair[0]: 0, pair[1]: 0})
        if j["winner"] != "tie":
            counts[j[j["winner"]]] += 1
    scores, human_ties, missing, metric_ties = [], 0, 0, 0
    for (a, b), counts in tally.items():
        if counts[a] == counts[b]:
            human_ties += 1
            continue
        human = a if counts[a] > counts[b] else b
        va, vb = values[a][metric], values[b][metric]
        if va is None or vb is None:
            missing += 1
            continue
        if va == vb:
            scores.append(0.5)
            metric_ties += 1
            continue
        metric_choice = (a if va > vb else b) if higher else (a if va < vb else b)
        scores.append(1.0 if metric_choice == human else 0.0)
    return scores, human_ties, missing, metric_ties


def test_equals_a_direct_count():
    data, values, judgments = synthetic()
    results = pairwise_accuracy(data, values, higher_is_better={"dist": False}, n_boot=0)
    assert [(r.criterion, r.metric) for r in results] == [
        (c, m) for c in ("cp", "pf") for m in ("good", "dist", "coarse", "sparse")
    ]
    for r in results:
        scores, human_ties, missing, metric_ties = direct(
            judgments, values, r.metric, r.criterion, higher=r.metric != "dist"
        )
        assert r.accuracy.value == pytest.approx(np.mean(scores), abs=1e-12)
        assert (r.n_pairs, r.n_human_ties, r.n_missing, r.n_metric_ties) == (
            len(scores),
            human_ties,
            missing,
            metric_ties,
        )
        assert math.isnan(r.accuracy.ci_low)
    by = {r.metric: r for r in results if r.criterion == "cp"}
    assert by["good"].accuracy.value == by["dist"].accuracy.value > 0.6
    assert by["coarse"].n_metric_ties > 0 and by["sparse"].n_missing > 0


def test_direction_flips_the_answer():
    data, values, _ = synthetic(seed=1)
    up = pairwise_accuracy(data, values, metrics=["good"], criteria=["cp"], n_boot=0)[0]
    down = pairwise_accuracy(
        data, values, metrics=["good"], criteria=["cp"], higher_is_better={"good": False}, n_boot=0
    )[0]
    assert up.accuracy.value + down.accuracy.value == pytest.approx(1.0)  # no metric ties on `good`


def test_ci_equals_a_hand_written_bootstrap_over_decided_pairs():
    data, values, judgments = synthetic(seed=2)
    r = pairwise_accuracy(data, values, metrics=["sparse"], criteria=["pf"], n_boot=300, seed=5, level=0.9)[0]
    # decided pairs in first-seen order, NaN where the metric is missing
    tally = {}
    for j in judgments:
        if j["criterion"] == "pf":
            pair = tuple(sorted((j["left"], j["right"])))
            t = tally.setdefault(pair, [0, 0])
            if j["winner"] != "tie":
                t[0 if j[j["winner"]] == pair[0] else 1] += 1
    scores = []
    for (a, b), (na, nb) in tally.items():
        if na == nb:
            continue
        va, vb = values[a]["sparse"], values[b]["sparse"]
        scores.append(np.nan if va is None or vb is None else 0.5 if va == vb else float((va > vb) == (na > nb)))
    scores = np.array(scores)
    reps = np.nanmean(scores[bootstrap_indices(scores.size, 300, 5)], axis=1)
    assert (r.accuracy.ci_low, r.accuracy.ci_high) == pytest.approx(tuple(np.percentile(reps, [5, 95])), abs=1e-12)


def test_all_human_ties_gives_nan():
    data = PairwiseData.from_records([{"left": "a", "right": "b", "criterion": "cp", "winner": "tie", "rater": "r"}])
    r = pairwise_accuracy(data, {"a": {"m": 1.0}, "b": {"m": 2.0}}, n_boot=100)[0]
    assert math.isnan(r.accuracy.value) and r.n_pairs == 0 and r.n_human_ties == 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"metrics": ["nope"]}, "no values for metric"),
        ({"criteria": ["sc"]}, "no values for criterion"),
        ({"n_boot": -2}, "n_boot"),
    ],
)
def test_errors(kwargs, match):
    data, values, _ = synthetic(n_pairs=5)
    with pytest.raises(InputError, match=match):
        pairwise_accuracy(data, values, **kwargs)
