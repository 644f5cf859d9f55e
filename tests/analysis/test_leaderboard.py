"""The leaderboard against direct pandas/numpy/scipy computations on synthetic data with known means."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from masc_ui.analysis import AgreementData
from masc_ui.analysis.bootstrap import MAX_N_BOOT, bootstrap_index_chunks, bootstrap_indices, child_seeds
from masc_ui.analysis.leaderboard import leaderboard
from masc_ui.errors import InputError

TRUE_CP = {"a": 0.30, "b": 0.50, "c": 0.60, "d": 0.80}
TRUE_HUMAN = {"a": 1.0, "b": 2.0, "c": 2.5, "d": 3.5}


def synthetic(n_per_method=30, seed=0, sd=0.1):
    """Records with known per-method means: metric `cp` ~ N(TRUE_CP, sd), `dist` = 1 - cp (lower is better),
    `noise` unrelated; cp ratings by 1-3 raters drawn around TRUE_HUMAN; some values missing."""
    rng = np.random.default_rng(seed)
    records = []
    for method in TRUE_CP:
        for i in range(n_per_method):
            cp = TRUE_CP[method] + rng.normal(scale=sd)
            raters = rng.choice(["r1", "r2", "r3"], size=rng.integers(1, 4), replace=False)
            ratings = {r: float(np.clip(np.round(TRUE_HUMAN[method] + rng.normal(scale=0.7)), 0, 4)) for r in raters}
            records.append(
                {
                    "sample_id": f"{method}{i}",
                    "method": method,
                    "category": ("animal", "object")[i % 2],
                    "metrics": {
                        "cp": cp,
                        "dist": 1.0 - cp + rng.normal(scale=0.01),
                        "noise": None if i % 7 == 0 else float(rng.normal()),
                    },
                    "ratings": {"cp": ratings, "pf": {"r1": None if i % 5 == 0 else float(rng.integers(0, 5))}},
                }
            )
    return records


def frame(records):
    """One row per sample: metrics, and per criterion the mean over raters (NaN = not rated)."""
    rows = []
    for r in records:
        row = {"method": r["method"], "category": r["category"]}
        row.update({m: np.nan if v is None else v for m, v in r["metrics"].items()})
        for c, by_rater in r["ratings"].items():
            given = [v for v in by_rater.values() if v is not None]
            row[f"human_{c}"] = np.mean(given) if given else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("by", ["method", "category"])
def test_means_counts_and_ranks_equal_pandas(by):
    records = synthetic()
    board = leaderboard(AgreementData.from_records(records), by=by, higher_is_better={"dist": False}, n_boot=0)
    df = frame(records)
    grouped = df.groupby(by)
    assert board.groups == sorted(df[by].unique())
    for column, direction in (("cp", True), ("dist", False), ("noise", True), ("human_cp", True), ("human_pf", True)):
        means = grouped[column].mean()
        counts = grouped[column].count()
        ranks = means.rank(method="min", ascending=not direction)
        for group in board.groups:
            cell = (
                board.row(group).humans[column[6:]] if column.startswith("human_") else board.row(group).metrics[column]
            )
            assert cell.mean.value == pytest.approx(means[group], abs=1e-12)
            assert cell.n == counts[group]
            assert cell.rank == int(ranks[group])
            assert math.isnan(cell.mean.ci_low)
    for group in board.groups:
        assert board.row(group).n == int((df[by] == group).sum())


def test_known_means_are_recovered_and_ranked():
    board = leaderboard(
        AgreementData.from_records(synthetic(n_per_method=400)), higher_is_better={"dist": False}, n_boot=0
    )
    for method, truth in TRUE_CP.items():
        assert board.row(method).metrics["cp"].mean.value == pytest.approx(truth, abs=0.02)
    assert [board.row(m).metrics["cp"].rank for m in "abcd"] == [4, 3, 2, 1]
    assert [board.row(m).metrics["dist"].rank for m in "abcd"] == [4, 3, 2, 1]  # lower is better
    assert [board.row(m).humans["cp"].rank for m in "abcd"] == [4, 3, 2, 1]


def test_cis_equal_a_hand_written_stratified_bootstrap():
    records = synthetic()
    board = leaderboard(AgreementData.from_records(records), n_boot=300, seed=7, level=0.9)
    df = frame(records)
    seeds = child_seeds(7, 4)
    for g, method in enumerate(sorted(TRUE_CP)):
        part = df[df.method == method]
        idx = bootstrap_indices(len(part), 300, seeds[g])
        for column in ("cp", "noise", "human_cp", "human_pf"):
            values = part[column].to_numpy()
            reps = np.nanmean(values[idx], axis=1)
            lo, hi = np.percentile(reps, [5, 95])
            cell = (
                board.row(method).humans[column[6:]]
                if column.startswith("human_")
                else board.row(method).metrics[column]
            )
            assert (cell.mean.ci_low, cell.mean.ci_high) == pytest.approx((lo, hi), abs=1e-12)


def test_index_chunks_are_the_rows_of_bootstrap_indices():
    for n, n_boot, chunk in ((40, 1000, 250), (7, 13, 5), (0, 3, 2)):
        chunks = list(bootstrap_index_chunks(n, n_boot, 5, chunk))
        assert all(c.shape[0] <= chunk for c in chunks)
        np.testing.assert_array_equal(np.concatenate(chunks), bootstrap_indices(n, n_boot, 5))


def test_rank_agreement_is_scipy_kendall_tau_b_between_method_rankings():
    records = synthetic(n_per_method=8, sd=0.3, seed=3)
    board = leaderboard(AgreementData.from_records(records), higher_is_better={"dist": False}, n_boot=200)
    df = frame(records)
    means = df.groupby("method")[["cp", "dist", "noise", "human_cp", "human_pf"]].mean()
    for metric, sign in (("cp", 1), ("dist", -1), ("noise", 1)):
        for criterion in ("cp", "pf"):
            expected = stats.kendalltau(sign * means[metric], means[f"human_{criterion}"], variant="b").statistic
            a = board.rank_agreement(metric, criterion)
            assert a.n_groups == 4
            assert a.tau.value == pytest.approx(expected, abs=1e-12)
            assert a.tau.ci_low <= a.tau.value + 1e-12 or math.isnan(a.tau.value)
            # the same number from the two rankings (rank 1 = best)
            ranks_m = [board.row(m).metrics[metric].rank for m in board.groups]
            ranks_h = [board.row(m).humans[criterion].rank for m in board.groups]
            assert stats.kendalltau(ranks_m, ranks_h).statistic == pytest.approx(expected, abs=1e-12)


def test_rank_agreement_with_ties_uses_tau_b():
    # five methods; metric ties two of them, humans tie two others
    metric = {"m1": 0.1, "m2": 0.2, "m3": 0.2, "m4": 0.4, "m5": 0.5}
    human = {"m1": 1.0, "m2": 1.0, "m3": 2.0, "m4": 4.0, "m5": 3.0}
    records = [
        {"sample_id": m, "method": m, "metrics": {"x": metric[m]}, "ratings": {"cp": {"r": human[m]}}} for m in metric
    ]
    board = leaderboard(AgreementData.from_records(records), n_boot=0)
    assert [board.row(m).metrics["x"].rank for m in metric] == [5, 3, 3, 2, 1]
    assert [board.row(m).humans["cp"].rank for m in metric] == [4, 4, 3, 1, 2]
    expected = stats.kendalltau(list(metric.values()), list(human.values()), variant="b").statistic
    assert board.rank_agreement("x", "cp").tau.value == pytest.approx(expected, abs=1e-12)


def test_fewer_than_three_methods_or_constant_ranking_is_undefined():
    records = [r for r in synthetic() if r["method"] in ("a", "b")]
    a = leaderboard(AgreementData.from_records(records), n_boot=50).rank_agreement("cp", "cp")
    assert a.n_groups == 2 and math.isnan(a.tau.value) and math.isnan(a.tau.ci_low)
    constant = [{**r, "metrics": {"k": 1.0}} for r in synthetic()]
    a = leaderboard(AgreementData.from_records(constant), n_boot=50).rank_agreement("k", "cp")
    assert a.n_groups == 4 and math.isnan(a.tau.value) and math.isnan(a.tau.ci_high)


def test_cis_cover_the_true_means_at_about_the_nominal_rate():
    hits = total = 0
    for draw in range(150):
        board = leaderboard(
            AgreementData.from_records(synthetic(n_per_method=25, seed=100 + draw)),
            metrics=["cp"],
            criteria=[],
            n_boot=400,
            seed=draw,
        )
        for method, truth in TRUE_CP.items():
            cell = board.row(method).metrics["cp"]
            hits += cell.mean.ci_low <= truth <= cell.mean.ci_high
            total += 1
    # 600 intervals at a nominal 95% (the percentile bootstrap runs a little narrow at n = 25)
    assert 0.90 <= hits / total <= 0.985


def test_records_without_a_group_are_counted_and_left_out():
    records = synthetic(n_per_method=5)
    records.append({"sample_id": "lost", "metrics": {"cp": 100.0}, "ratings": {"cp": {"r1": 4.0}}})
    board = leaderboard(AgreementData.from_records(records), n_boot=0)
    assert board.n_ungrouped == 1 and board.groups == ["a", "b", "c", "d"]
    assert board.row("a").metrics["cp"].mean.value < 1.0


def test_seeded_and_reproducible():
    data = AgreementData.from_records(synthetic(n_per_method=10))
    one = leaderboard(data, n_boot=100, seed=3)
    assert one == leaderboard(data, n_boot=100, seed=3)
    assert one.row("a").metrics["cp"].mean != leaderboard(data, n_boot=100, seed=4).row("a").metrics["cp"].mean


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"by": "subject"}, "`by` must be one of"),
        ({"by": None}, "`by` must be one of"),
        ({"metrics": ["nope"]}, "no values for metric"),
        ({"metrics": "cp"}, "as a list"),
        ({"criteria": ["sc"]}, "no values for criterion"),
        ({"n_boot": MAX_N_BOOT + 1}, "at most"),
        ({"n_boot": -1}, "n_boot"),
        ({"level": 1.5}, "confidence level"),
        ({"seed": -3}, "seed"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(InputError, match=match):
        leaderboard(AgreementData.from_records(synthetic(n_per_method=3)), **{"n_boot": 10, **kwargs})


def test_no_grouped_sample():
    records = [{"sample_id": "s", "metrics": {"cp": 1.0}}]
    with pytest.raises(InputError, match="no sample has a method"):
        leaderboard(AgreementData.from_records(records))
