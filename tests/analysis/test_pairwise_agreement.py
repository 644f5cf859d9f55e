"""Inter-rater agreement on pairs against the `krippendorff` package and hand counts."""

import math

import krippendorff
import numpy as np
import pytest
from pairwise_votes import davidson_judgments

from masc_ui.analysis.bootstrap import bootstrap_indices
from masc_ui.analysis.kappa import fleiss_kappa
from masc_ui.analysis.pairwise_agreement import pairwise_rater_agreement
from masc_ui.analysis.pairwise_data import PairwiseData
from masc_ui.errors import InputError


def canonical_table(judgments, criterion="cp"):
    """(raters, units) of codes 0 (first sample by name better) / 1 tie / 2, units judged at least twice."""
    units, raters = {}, {}
    for j in judgments:
        if j["criterion"] != criterion:
            continue
        a, b = sorted((j["left"], j["right"]))
        code = 1 if j["winner"] == "tie" else (0 if j[j["winner"]] == a else 2)
        units.setdefault((a, b), {})[j["rater"]] = code
        raters.setdefault(j["rater"], None)
    kept = [u for u in units.values() if len(u) >= 2]
    return np.array([[u.get(r, np.nan) for u in kept] for r in raters], dtype=float), kept


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_alpha_equals_the_package_and_agreement_a_hand_count(level):
    judgments = davidson_judgments([-1.0, 0.0, 1.0], 0.5, 80, raters_per_pair=3, seed=1)
    judgments = [j for k, j in enumerate(judgments) if k % 7 != 0]  # some pairs lose one of their 3 raters
    res = pairwise_rater_agreement(PairwiseData.from_records(judgments), "cp", level=level, n_boot=0)
    table, units = canonical_table(judgments)
    assert res.n_units == table.shape[1] and res.n_judgments == int((~np.isnan(table)).sum())
    assert res.alpha.value == pytest.approx(krippendorff.alpha(table, level_of_measurement=level), abs=1e-12)
    shares = []
    for u in units:
        answers = list(u.values())
        pairs = [(x, y) for i, x in enumerate(answers) for y in answers[i + 1 :]]
        shares.append(sum(x == y for x, y in pairs) / len(pairs))
    assert res.percent_agreement.value == pytest.approx(np.mean(shares), abs=1e-12)
    assert math.isnan(res.fleiss_kappa)  # units with 2 and 3 judgments


def test_fleiss_kappa_when_every_unit_has_the_same_number_of_judgments():
    judgments = davidson_judgments([-1.0, 0.0, 1.0], 0.5, 60, raters_per_pair=3, seed=2)
    res = pairwise_rater_agreement(PairwiseData.from_records(judgments), "cp", n_boot=0)
    table, _ = canonical_table(judgments)
    assert res.fleiss_kappa == pytest.approx(fleiss_kappa(table.T), abs=1e-12)


def test_orientation_does_not_matter():
    # two raters who agree, having seen the pair in opposite orders
    data = PairwiseData.from_records(
        [
            {"left": "x", "right": "y", "criterion": "cp", "winner": "left", "rater": "r1"},
            {"left": "y", "right": "x", "criterion": "cp", "winner": "right", "rater": "r2"},
            {"left": "u", "right": "v", "criterion": "cp", "winner": "tie", "rater": "r1"},
            {"left": "v", "right": "u", "criterion": "cp", "winner": "tie", "rater": "r2"},
        ]
    )
    res = pairwise_rater_agreement(data, "cp", n_boot=0)
    assert res.percent_agreement.value == 1.0 and res.alpha.value == pytest.approx(1.0)


def test_ci_equals_a_hand_written_bootstrap_over_units():
    judgments = davidson_judgments([-1.0, 0.0, 1.0], 0.5, 40, raters_per_pair=2, seed=3)
    res = pairwise_rater_agreement(PairwiseData.from_records(judgments), "cp", n_boot=200, seed=4, confidence=0.9)
    table, _ = canonical_table(judgments)
    reps = []
    for idx in bootstrap_indices(table.shape[1], 200, 4):
        sub = table[:, idx]
        reps.append(
            krippendorff.alpha(sub, level_of_measurement="nominal")
            if np.unique(sub[~np.isnan(sub)]).size > 1
            else np.nan
        )
    reps = np.array(reps)
    lo, hi = np.percentile(reps[~np.isnan(reps)], [5, 95])
    assert (res.alpha.ci_low, res.alpha.ci_high) == pytest.approx((lo, hi), abs=1e-9)


def test_no_overlap():
    data = PairwiseData.from_records([{"left": "a", "right": "b", "criterion": "cp", "winner": "left", "rater": "r"}])
    res = pairwise_rater_agreement(data, "cp")
    assert res.n_units == 0 and math.isnan(res.alpha.value) and math.isnan(res.percent_agreement.value)


def test_errors():
    data = PairwiseData.from_records([{"left": "a", "right": "b", "criterion": "cp", "winner": "left", "rater": "r"}])
    with pytest.raises(InputError, match="level of measurement"):
        pairwise_rater_agreement(data, "cp", level="cardinal")
    with pytest.raises(InputError, match="no pairwise judgments"):
        pairwise_rater_agreement(data, "pf")
