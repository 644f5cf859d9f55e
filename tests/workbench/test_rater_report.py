"""The rater report (use case, SQLite and PostgreSQL): every column on raters whose answers are known, the marks and
their reasons (nothing deleted), imported raters left out, gold and attention graded, the agreement columns on the
samples that are not gold; admins only."""

from __future__ import annotations

import math

import pytest
from gold_samples import save_samples
from scipy.stats import spearmanr

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench import build_workbench
from masc_ui.workbench.rater_report import report_rows
from masc_ui.workbench.users import AccessDenied, Account, Accounts

TRUTH = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 2, 3]
"""The scores a careful rater gives the 12 normal samples (both criteria)."""


@pytest.fixture()
def rated(demo_settings: Settings, database_url: str | None, tmp_path):
    wb = build_workbench(demo_settings.replace(database_url=database_url, min_seconds=2.0))
    ids = save_samples(wb, tmp_path / "img", 14)
    normal, gold = ids[:12], ids[12:]
    for sid in gold:
        wb.gold.mark(user=None, dataset="d", sample=f"#{sid}", criterion="cp", accepted="3-4")
    store = wb.database.store
    for name in ("ann", "ben", "cat"):
        store.ratings.ensure_rater(name)
    answers = {
        "ann": ([*TRUTH, 4, 4], [5.0 + i for i in range(14)]),  # careful, slow, right on gold
        "ben": ([min(4, s + (i % 2)) for i, s in enumerate(TRUTH)] + [3, 0], [4.0] * 14),  # close, one gold wrong
        "cat": ([2] * 14, [0.5] * 10 + [3.0] * 4),  # the same answer every time, too fast
    }
    for name, (scores, seconds) in answers.items():
        for k, (sid, score, s) in enumerate(zip(normal + gold, scores, seconds, strict=True), 1):
            wb.ratings.submit(name, sid, {"cp": score, "pf": score}, seconds_spent=s, presentation_order=k)
    wb.ratings.submit("ann", ids[0], {}, status="flagged", reason="blurry")  # replaces ann's first answer
    provenance = {"model_id": "synthetic", "code_version": "test"}
    for sid, score in zip(normal, TRUTH, strict=True):  # a metric that ranks the samples as the careful rater
        store.metrics.record(sid, "clip_t", 0.1 * score + 0.01 * sid, provenance=provenance)
    store.ratings.ensure_rater("imported:g1", external=True)
    store.ratings.rate("imported:g1", normal[1], "cp", 1)
    yield wb, ids
    wb.close()


def test_every_column_of_the_report(rated):
    wb, ids = rated
    report = wb.rater_report.report(user=None, dataset="d", criterion="cp", n_boot=200)
    rows = {q.rater: q for q in report.rows}
    assert list(rows) == ["ann", "ben", "cat"]  # the imported group is not a rater of the app
    ann, ben, cat = rows["ann"], rows["ben"], rows["cat"]
    assert (ann.answers, ann.skips, ann.flags) == (13, 0, 1)
    assert ann.median_seconds == pytest.approx(11.5) and ann.p10_seconds == pytest.approx(6.3)
    assert (cat.under_floor, cat.timed) == (10, 14) and (ann.under_floor, ann.timed) == (0, 14)
    assert cat.longest_identical_run == 14 and ann.longest_identical_run == 2  # ann: the two gold 4s
    assert (ann.gold.correct, ann.gold.n) == (2, 2) and (ben.gold.correct, ben.gold.n) == (1, 2)
    assert (cat.gold.correct, cat.gold.n) == (0, 2) and cat.attention.n == 0
    assert ann.loo_n == 11 and ben.loo_n == 12  # ann flagged one normal sample; gold samples are not in it
    assert ann.loo_alpha.value > 0.5 and ann.loo_alpha.ci_low < ann.loo_alpha.value < ann.loo_alpha.ci_high
    assert cat.loo_alpha.value < 0.2
    values = [0.1 * score + 0.01 * sid for sid, score in zip(ids[:12], TRUTH, strict=True)]
    expected = spearmanr(TRUTH[1:], values[1:]).statistic  # ann flagged the first sample
    assert ann.metric_rho["clip_t"] == (pytest.approx(expected, abs=1e-12), 11) and ben.metric_rho["clip_t"][1] == 12
    assert math.isnan(cat.metric_rho["clip_t"][0])  # a constant rater: undefined, said n/a
    assert ann.marks == () and ben.marks == ()
    assert cat.marks == (
        "10/14 tasks answered under the time floor (over 25%)",
        "14 identical answers in a row",
        f"agreement with the other raters alpha {cat.loo_alpha.value:.2f} is under 0.2",
    )
    assert report.marked == ["cat"]
    headers, grid = report_rows(report)
    assert headers[:3] == ["rater", "answers", "skips"] and grid[2][0] == "cat" and grid[2][6] == "10/14"
    assert headers[-1] == "rho CLIP-T" and grid[0][-1] == f"{expected:.2f} (n=11)" and grid[2][-1] == "n/a (n=12)"
    text = report.text()
    assert "marked: cat (10/14 tasks answered under the time floor" in text
    data = report.to_dict()
    assert data["raters"][0]["gold"] == {"correct": 2, "n": 2} and data["raters"][2]["marked"] is True
    assert len(wb.database.store.ratings.current(rater="cat")) == 28  # marked, nothing deleted


def test_attention_checks_are_graded_in_their_own_column(rated):
    wb, ids = rated
    wb.gold.make_attention_checks(user=None, dataset="d")
    (check,) = wb.gold.answers(user=None, dataset="d", kind="attention")
    wb.ratings.submit("ann", check.sample_id, {"cp": 4, "pf": 2})
    wb.ratings.submit("cat", check.sample_id, {"cp": 2, "pf": 2})
    rows = {q.rater: q for q in wb.rater_report.report(user=None, dataset="d", n_boot=0).rows}
    assert (rows["ann"].attention.correct, rows["ann"].attention.n) == (1, 1)
    assert (rows["cat"].attention.correct, rows["cat"].attention.n) == (0, 1)
    assert rows["ann"].gold.n == 2  # the check is not a gold task


def test_the_report_is_checked_and_admin_only(rated):
    wb, _ = rated
    with pytest.raises(InputError, match="criterion must be one of cp, pf"):
        wb.rater_report.report(user=None, dataset="d", criterion="sc")
    with pytest.raises(InputError, match="dataset 'nope' is not in the database"):
        wb.rater_report.report(user=None, dataset="nope")
    wb.database.store.samples.ensure_dataset("empty")
    with pytest.raises(InputError, match="no rater has answered a task of 'empty' yet"):
        wb.rater_report.report(user=None, dataset="empty")
    accounts = Accounts({"ann": Account("ann", "-", "admin"), "rae": Account("rae", "-", "rater")})
    guarded = build_workbench(wb.settings, store=wb.database.store, accounts=accounts)
    with pytest.raises(AccessDenied):
        guarded.rater_report.report(user="rae", dataset="d")
    assert guarded.rater_report.report(user="ann", dataset="d", n_boot=0).marked == ["cat"]
