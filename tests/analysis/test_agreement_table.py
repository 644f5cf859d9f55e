"""The agreement table against independent reference computations (the `krippendorff` package, scipy,
a hand-written bootstrap)."""

import json
import math

import krippendorff
import numpy as np
import pytest
from scipy import stats

from masc_ui.analysis import (
    HUMANS,
    RATING_0_4,
    AgreementData,
    agreement_table,
    bootstrap_indices,
    format_table,
    metric_difference,
    scatter_points,
    to_json,
)
from masc_ui.analysis.numbers import format_value
from masc_ui.errors import InputError

METHODS = ("dreambooth", "blip_diffusion", "emu2")


def dreambench_like(n=60, seed=0, sparse=False):
    """Records shaped like DreamBench++: two human groups rating cp 0-4, a continuous metric that tracks
    them, a noisy one, and a GPT-style 0-4 judge. `sparse`: four raters, each sample rated by two."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n):
        q = rng.random()
        if sparse:
            raters = [f"u{k}" for k in rng.choice(4, size=2, replace=False)]
        else:
            raters = ["group1", "group2"]
        ratings = {r: float(np.clip(np.round(4 * q + rng.normal(scale=0.8)), 0, 4)) for r in raters}
        records.append(
            {
                "sample_id": f"s{i}",
                "method": METHODS[i % 3],
                "category": ("animal", "object")[i % 2],
                "metrics": {
                    "cp": 0.5 + 0.3 * q + 0.05 * rng.normal(),
                    "clip_i": 0.6 + 0.1 * q + 0.1 * rng.normal(),
                    "gpt": float(np.clip(np.round(4 * q + rng.normal()), 0, 4)),
                },
                "ratings": {"cp": ratings},
            }
        )
    return AgreementData.from_records(records, scales={"gpt": RATING_0_4})


def minmax(v):
    return (v - v.min()) / (v.max() - v.min())


def reference_alpha(metric_unit, ratings_unit):
    """Mean over raters of the package's interval alpha, each on the units that rater rated."""
    alphas = []
    for r in ratings_unit:
        keep = ~np.isnan(r)
        alphas.append(krippendorff.alpha(np.stack([metric_unit[keep], r[keep]]), level_of_measurement="interval"))
    return float(np.mean(alphas))


def arrays(data, metric, group=None):
    records = [r for r in data.records if group is None or r.method == group]
    values = data.metric_values(records, metric)
    _, ratings = data.rating_matrix(records, "cp")
    return values, ratings


@pytest.mark.parametrize("sparse", [False, True])
def test_metric_rows_equal_reference_computations(sparse):
    data = dreambench_like(sparse=sparse)
    table = agreement_table(data, ["cp", "gpt"], "cp", n_boot=0)
    for metric, to_unit in (("cp", minmax), ("gpt", lambda v: v / 4)):
        values, ratings = arrays(data, metric)
        row = table.row(metric)
        assert row.n == 60 and row.n_raters == (4 if sparse else 2)
        assert row.alpha.value == pytest.approx(reference_alpha(to_unit(values), ratings / 4), abs=1e-12)
        mean = np.nanmean(ratings, axis=0)
        assert row.spearman.value == pytest.approx(stats.spearmanr(values, mean).statistic, abs=1e-12)
        assert row.kendall.value == pytest.approx(stats.kendalltau(values, mean).statistic, abs=1e-12)
        assert row.pearson.value == pytest.approx(stats.pearsonr(values, mean).statistic, abs=1e-12)
        assert math.isnan(row.alpha.ci_low)  # n_boot=0: no CI


def test_judge_is_divided_by_four_not_min_max_normalized():
    data = dreambench_like()
    values, ratings = arrays(data, "gpt")
    alpha = agreement_table(data, ["gpt"], "cp", n_boot=0).row("gpt").alpha.value
    assert alpha == pytest.approx(reference_alpha(values / 4, ratings / 4), abs=1e-12)
    as_continuous = AgreementData(data.records)  # no declared scale: min-max
    alpha_minmax = agreement_table(as_continuous, ["gpt"], "cp", n_boot=0).row("gpt").alpha.value
    assert alpha_minmax == pytest.approx(reference_alpha(minmax(values), ratings / 4), abs=1e-12)
    # On a group where the judge does not span 0..4 the two conventions differ.
    sub = AgreementData(tuple(r for r in data.records if 1 <= r.metrics["gpt"] <= 3), data.scales)
    v, h = arrays(sub, "gpt")
    judge = agreement_table(sub, ["gpt"], "cp", n_boot=0).row("gpt").alpha.value
    assert judge == pytest.approx(reference_alpha(v / 4, h / 4), abs=1e-12)
    assert judge != pytest.approx(reference_alpha(minmax(v), h / 4), abs=1e-6)


def test_groups_normalize_within_the_group_and_pooled_comes_first():
    data = dreambench_like()
    table = agreement_table(data, ["cp"], "cp", by="method", n_boot=0)
    assert table.groups == ["all", *sorted(METHODS)]
    assert [r.metric for r in table.rows[:2]] == ["cp", HUMANS]
    for method in METHODS:
        values, ratings = arrays(data, "cp", method)
        row = table.row("cp", method)
        assert row.n == 20
        assert row.alpha.value == pytest.approx(reference_alpha(minmax(values), ratings / 4), abs=1e-12)
    by_category = agreement_table(data, ["cp"], "cp", by="category", n_boot=0)
    assert by_category.groups == ["all", "animal", "object"] and by_category.row("cp", "animal").n == 30


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_human_row_is_the_package_alpha_and_rater_correlations(level):
    data = dreambench_like()
    _, ratings = arrays(data, "cp")
    row = agreement_table(data, [], "cp", n_boot=0, human_level=level).row(HUMANS)
    assert row.is_human and row.n == 60 and row.n_raters == 2
    assert row.alpha.value == pytest.approx(krippendorff.alpha(ratings / 4, level_of_measurement=level), abs=1e-12)
    assert row.spearman.value == pytest.approx(stats.spearmanr(ratings[0], ratings[1]).statistic, abs=1e-12)
    assert row.kendall.value == pytest.approx(stats.kendalltau(ratings[0], ratings[1]).statistic, abs=1e-12)


def test_human_row_with_sparse_raters_averages_rater_pairs():
    data = dreambench_like(sparse=True)
    _, ratings = arrays(data, "cp")
    row = agreement_table(data, [], "cp", n_boot=0).row(HUMANS)
    assert row.alpha.value == pytest.approx(krippendorff.alpha(ratings, level_of_measurement="interval"), abs=1e-12)
    pearsons = []
    for a in range(4):
        for b in range(a + 1, 4):
            both = ~np.isnan(ratings[a]) & ~np.isnan(ratings[b])
            if both.sum() >= 2:
                pearsons.append(stats.pearsonr(ratings[a, both], ratings[b, both]).statistic)
    assert row.pearson.value == pytest.approx(np.mean(pearsons), abs=1e-12)


def test_bootstrap_ci_equals_a_hand_written_paired_bootstrap():
    data = dreambench_like(n=24, seed=3)
    n_boot, seed = 60, 11
    table = agreement_table(data, ["cp"], "cp", n_boot=n_boot, seed=seed)
    values, ratings = arrays(data, "cp")
    alphas, spearmans, kendalls = [], [], []
    for idx in bootstrap_indices(24, n_boot, seed):
        v, h = values[idx], ratings[:, idx]
        alphas.append(reference_alpha(minmax(v), h / 4))  # min-max redone on each resample
        spearmans.append(stats.spearmanr(v, h.mean(axis=0)).statistic)
        kendalls.append(stats.kendalltau(v, h.mean(axis=0)).statistic)
    row = table.row("cp")
    assert (row.kendall.ci_low, row.kendall.ci_high) == pytest.approx(
        tuple(np.percentile(kendalls, [2.5, 97.5])), abs=1e-12
    )
    assert (row.alpha.ci_low, row.alpha.ci_high) == pytest.approx(tuple(np.percentile(alphas, [2.5, 97.5])), abs=1e-12)
    assert (row.spearman.ci_low, row.spearman.ci_high) == pytest.approx(
        tuple(np.percentile(spearmans, [2.5, 97.5])), abs=1e-12
    )
    human_alphas = [
        krippendorff.alpha(ratings[:, i], level_of_measurement="interval") for i in bootstrap_indices(24, n_boot, seed)
    ]
    human = table.row(HUMANS).alpha
    assert (human.ci_low, human.ci_high) == pytest.approx(tuple(np.percentile(human_alphas, [2.5, 97.5])), abs=1e-12)


def test_cis_are_seeded_and_bracket_the_value():
    data = dreambench_like(n=90)
    a = agreement_table(data, ["cp", "clip_i"], "cp", n_boot=300, seed=1)
    assert a == agreement_table(data, ["cp", "clip_i"], "cp", n_boot=300, seed=1)
    assert a != agreement_table(data, ["cp", "clip_i"], "cp", n_boot=300, seed=2)
    for row in a.rows:
        for s in ("alpha", "spearman", "kendall", "pearson"):
            e = row.stat(s)
            assert e.ci_low <= e.value <= e.ci_high
    wide = agreement_table(data, ["cp"], "cp", n_boot=300, seed=1, level=0.99).row("cp").alpha
    narrow = a.row("cp").alpha
    assert wide.ci_low <= narrow.ci_low and wide.ci_high >= narrow.ci_high


def test_difference_of_two_metrics_is_paired():
    data = dreambench_like(n=90)
    d = metric_difference(data, "cp", "clip_i", "cp", statistic="alpha", n_boot=300, seed=1)
    table = agreement_table(data, ["cp", "clip_i"], "cp", n_boot=300, seed=1)
    assert d.a == table.row("cp").alpha and d.b == table.row("clip_i").alpha  # same samples, same resamples
    assert d.difference.value == pytest.approx(d.a.value - d.b.value)
    assert d.difference.ci_low > 0  # cp tracks the humans much more closely than the noisy clip_i
    same = metric_difference(data, "cp", "cp", "cp", statistic="kendall", n_boot=100)
    assert (same.difference.value, same.difference.ci_low, same.difference.ci_high) == (0.0, 0.0, 0.0)
    grouped = metric_difference(data, "cp", "gpt", "cp", statistic="spearman", by="method", group="emu2", n_boot=50)
    assert grouped.n == 30 and grouped.group == "emu2"


def test_difference_uses_only_samples_with_both_metrics():
    data = dreambench_like(n=30)
    records = list(data.records)
    records[0] = type(records[0])(
        records[0].sample_id,
        records[0].method,
        records[0].category,
        {"cp": records[0].metrics["cp"]},
        records[0].ratings,
    )
    d = metric_difference(AgreementData(tuple(records), data.scales), "cp", "clip_i", "cp", n_boot=0)
    assert d.n == 29


def test_rows_without_samples_or_raters_are_undefined_not_errors():
    records = [
        {"sample_id": "a", "method": "m1", "metrics": {"cp": 0.2}, "ratings": {"cp": {"u": 1}}},
        {"sample_id": "b", "method": "m1", "metrics": {"cp": 0.4}, "ratings": {"cp": {"u": 3}}},
        {"sample_id": "c", "method": "m2", "metrics": {"cp": 0.3}, "ratings": {"cp": {}}},
    ]
    table = agreement_table(AgreementData.from_records(records), None, "cp", by="method", n_boot=20)
    m2 = table.row("cp", "m2")
    assert m2.n == 0 and math.isnan(m2.alpha.value) and math.isnan(m2.spearman.value)
    humans = table.row(HUMANS, "m1")
    assert humans.n_raters == 1 and math.isnan(humans.alpha.value)
    assert table.row("cp", "m1").n == 2
    text = format_table(table)
    assert "n/a" in text and "m2" in text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"metrics": ["dino_i"]}, "no values"),
        ({"criterion": "pf"}, "criterion 'pf'"),
        ({"by": "seed"}, "`by`"),
        ({"human_level": "cardinal"}, "human_level"),
        ({"n_boot": -5}, "n_boot"),
        ({"level": 95}, "level"),
    ],
)
def test_table_errors(kwargs, match):
    args = {"data": dreambench_like(n=10), "metrics": ["cp"], "criterion": "cp", **kwargs}
    with pytest.raises(InputError, match=match):
        agreement_table(**args)


def test_difference_errors():
    data = dreambench_like(n=10)
    with pytest.raises(InputError, match="statistic"):
        metric_difference(data, "cp", "gpt", statistic="r2")
    with pytest.raises(InputError, match="no values"):
        metric_difference(data, "cp", "pickscore")
    with pytest.raises(InputError, match="no samples with method"):
        metric_difference(data, "cp", "gpt", by="method", group="sd3")


def test_json_is_strict_and_complete():
    data = dreambench_like(n=30)
    table = agreement_table(data, None, "cp", by="method", n_boot=50)
    payload = json.loads(to_json(table))
    assert payload["criterion"] == "cp" and payload["n_boot"] == 50 and payload["by"] == "method"
    assert len(payload["rows"]) == len(table.rows) == 4 * 4
    first = payload["rows"][0]
    assert first["metric"] == "cp" and first["group"] == "all" and set(first["alpha"]) == {"value", "ci_low", "ci_high"}
    no_ci = json.loads(to_json(agreement_table(data, ["cp"], "cp", n_boot=0)))
    assert no_ci["rows"][0]["alpha"]["ci_low"] is None
    diffs = json.loads(to_json([metric_difference(data, "cp", "gpt", n_boot=20)]))
    assert diffs[0]["metric_a"] == "cp" and diffs[0]["difference"]["value"] is not None


def test_text_table_lists_every_row_with_its_ci():
    data = dreambench_like(n=30)
    table = agreement_table(data, ["cp", "gpt"], "cp", by="method", n_boot=50)
    text = format_table(table, digits=2)
    lines = text.splitlines()
    assert "'cp'" in lines[0] and "95%" in lines[0] and "50 resamples" in lines[0]
    body = [line for line in lines[3:] if line]
    assert len(body) == len(table.rows)
    row = table.row("gpt", "emu2")
    assert any(
        line.startswith("emu2")
        and f"{format_value(row.alpha.value, 2)} [{format_value(row.alpha.ci_low, 2)}, "
        f"{format_value(row.alpha.ci_high, 2)}]"
        in line
        for line in body
    )
    assert all(line == line.rstrip() for line in lines)


def test_scatter_points():
    data = dreambench_like(sparse=True)
    points = scatter_points(data, "cp", "cp")
    values, ratings = arrays(data, "cp")
    np.testing.assert_allclose(points.values, values)
    np.testing.assert_allclose(points.human_mean, np.nanmean(ratings, axis=0))
    np.testing.assert_allclose(points.human_mean_unit, np.nanmean(ratings, axis=0) / 4)
    assert set(points.n_ratings) == {2}
    emu = scatter_points(data, "cp", "cp", by="method", group="emu2")
    assert len(emu.sample_ids) == 20 and set(emu.methods) == {"emu2"}
    with pytest.raises(InputError, match="no values"):
        scatter_points(data, "dino_i")


def test_fast_resampled_paths_equal_a_hand_written_bootstrap():
    # Ratings with few values: Kendall and the human alpha from resample counts.
    data = dreambench_like(n=150, seed=4)
    n_boot, seed = 30, 2
    table = agreement_table(data, ["cp"], "cp", n_boot=n_boot, seed=seed, human_level="ordinal")
    values, ratings = arrays(data, "cp")
    idx = bootstrap_indices(150, n_boot, seed)
    metric_kendall = [stats.kendalltau(values[i], ratings[:, i].mean(axis=0)).statistic for i in idx]
    human_kendall = [stats.kendalltau(ratings[0, i], ratings[1, i]).statistic for i in idx]
    human_alpha = [krippendorff.alpha(ratings[:, i], level_of_measurement="ordinal") for i in idx]
    for got, reps in (
        (table.row("cp").kendall, metric_kendall),
        (table.row(HUMANS).kendall, human_kendall),
        (table.row(HUMANS).alpha, human_alpha),
    ):
        assert (got.ci_low, got.ci_high) == pytest.approx(tuple(np.percentile(reps, [2.5, 97.5])), abs=1e-12)


def test_many_distinct_rating_values_fall_back_to_the_package_per_resample():
    rng = np.random.default_rng(5)
    records = [
        {
            "sample_id": f"s{i}",
            "metrics": {"m": float(q)},
            "ratings": {"cp": {"a": float(q * 100), "b": float(np.clip(q * 100 + rng.normal(scale=10), 0, 100))}},
        }
        for i, q in enumerate(rng.random(140))
    ]  # continuous ratings: no levels for Kendall, > 64 values
    data = AgreementData.from_records(records, rating_range=(0, 100))
    table = agreement_table(data, ["m"], "cp", n_boot=8, seed=3)
    _, ratings = arrays(data, "m")
    idx = bootstrap_indices(140, 8, 3)
    reps = [krippendorff.alpha(ratings[:, i] / 100, level_of_measurement="interval") for i in idx]
    human = table.row(HUMANS).alpha
    assert (human.ci_low, human.ci_high) == pytest.approx(tuple(np.percentile(reps, [2.5, 97.5])), abs=1e-9)
    kendalls = [stats.kendalltau(ratings[0, i], ratings[1, i]).statistic for i in idx]
    got = table.row(HUMANS).kendall
    assert (got.ci_low, got.ci_high) == pytest.approx(tuple(np.percentile(kendalls, [2.5, 97.5])), abs=1e-12)
