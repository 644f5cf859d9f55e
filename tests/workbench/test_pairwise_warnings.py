"""Pairwise results are never shown without caution: the ratings view's small-n rule (`agreement.small_n_warning`)
on pairs, a single rater, no CIs, every Bradley-Terry CI crossing 0; skips and flags counted per criterion; and the
leaderboard's note when every rank agreement CI is the full [-1, 1]."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from pairwise_samples import add_outputs

from masc_ui.workbench.agreement import SMALL_N, Agreement
from masc_ui.workbench.database import Database
from masc_ui.workbench.leaderboard import Leaderboards, agreement_notes
from masc_ui.workbench.pairwise_analysis import PairwiseAnalysis
from storage import ExternalPairJudgment, open_store

METHODS = ("m0", "m1", "m2")
REFERENCES = 3


@pytest.fixture()
def few_pairs(tmp_path: Path):
    """Dataset `ds`: 3 methods x 3 references, so 9 output pairs of two different methods. Raters ext1 and ext2
    judge every pair on cp with balanced outcomes (every method wins as often as it loses); ext1 alone judges pf;
    ext3 skips 2 pairs on cp and flags 1 pair on pf. A metric `cp` on every output. Yields (store, pairs)."""
    with open_store(None, tmp_path / "data") as store:
        outputs = add_outputs(store, methods=METHODS, references=REFERENCES)
        for k, s in enumerate(outputs):
            store.metrics.record(s.id, "cp", float(k % 5), provenance={"model_id": "test", "code_version": "test"})
        by_ref: dict[str, list] = {}
        for s in outputs:
            by_ref.setdefault(s.external_key.split("/")[0], []).append(s)
        pairs = [(a, b) for group in by_ref.values() for a, b in itertools.combinations(group, 2)]
        outcomes = itertools.cycle(("left", "right", "tie"))
        for rater in ("ext1", "ext2"):
            store.pairwise.import_external(
                rater, [ExternalPairJudgment(a.id, b.id, "cp", next(outcomes)) for a, b in pairs]
            )
        store.pairwise.import_external(
            "ext1",
            [ExternalPairJudgment(a.id, b.id, "pf", "left" if k % 2 else "right") for k, (a, b) in enumerate(pairs)],
        )
        store.pairwise.import_external(
            "ext3",
            [
                *(ExternalPairJudgment(a.id, b.id, "cp", None, status="skipped") for a, b in pairs[:2]),
                ExternalPairJudgment(*(s.id for s in pairs[2]), "pf", None, status="flagged", note="broken"),
            ],
        )
        yield store, pairs


def test_few_pairs_are_warned_about_by_the_ratings_views_rule(few_pairs):
    store, pairs = few_pairs
    report = PairwiseAnalysis(Database.of(store)).report(user=None, dataset="ds", n_boot=200, seed=0)
    cp, pf = report.criteria
    assert len(pairs) == 9 < SMALL_N
    assert cp.warnings[:3] == (
        f"only 9 output pair(s) compare two different methods (fewer than {SMALL_N}): the method ranking "
        "(Bradley-Terry, Elo, win rates) and its CIs are not reliable yet; judge more pairs",
        f"only 9 output pair(s) were judged by two or more raters (fewer than {SMALL_N}): the raters' agreement "
        "on pairs is not reliable yet; have a second rater judge the pairs the first one judged",
        f"only 6 pair(s) decided by the humans have values of a metric (fewer than {SMALL_N}): the metric "
        "accuracies and their CIs are not reliable yet; judge more pairs",
    )
    # balanced outcomes: no method is told apart from the average, and every CI says so
    assert all(e.ci_low <= 0 <= e.ci_high for e in cp.bradley_terry.strength.values())
    assert cp.warnings[3].startswith("every method's Bradley-Terry 95% CI includes 0 (the average strength)")
    assert len(cp.warnings) == 4
    # pf: one rater, no agreement among raters; its ranking is decisive enough to be fitted
    assert any(w.startswith("a single rater (ext1): there is no agreement among raters") for w in pf.warnings)
    assert not any("judged by two or more raters" in w for w in pf.warnings)
    for w in cp.warnings:
        assert f"warning: {w}" in report.text()
    assert report.to_dict()["criteria"][0]["warnings"] == list(cp.warnings)


def test_skips_and_flags_are_counted_per_criterion(few_pairs):
    store, _ = few_pairs
    report = PairwiseAnalysis(Database.of(store)).report(user=None, dataset="ds", n_boot=0)
    cp, pf = report.criteria
    assert (cp.n_skipped, cp.n_flagged) == (2, 0) and (pf.n_skipped, pf.n_flagged) == (0, 1)
    assert (report.n_skipped, report.n_flagged) == (2, 1)
    assert "0 bootstrap resamples: no confidence intervals" in cp.warnings
    assert not any("includes 0" in w for w in cp.warnings)  # no CI, no claim about CIs
    assert "2 skipped and 0 flagged answers left out" in cp.text()
    assert "0 skipped and 1 flagged answers left out" in pf.text()


def test_enough_pairs_and_a_clear_winner_give_no_warning(tmp_path: Path):
    with open_store(None, tmp_path / "data") as store:
        outputs = add_outputs(store, methods=METHODS, references=12)
        by_ref: dict[str, list] = {}
        for s in outputs:
            by_ref.setdefault(s.external_key.split("/")[0], []).append(s)
        pairs = [(a, b) for group in by_ref.values() for a, b in itertools.combinations(group, 2)]
        rank = {m: i for i, m in enumerate(METHODS)}
        for rater in ("ext1", "ext2"):
            store.pairwise.import_external(
                rater,
                [
                    ExternalPairJudgment(a.id, b.id, "cp", "left" if rank[a.method] < rank[b.method] else "right")
                    for k, (a, b) in enumerate(pairs)
                    if k % 7 or rater == "ext1"
                ]
                + [ExternalPairJudgment(a.id, b.id, "cp", "right") for k, (a, b) in enumerate(pairs) if not k % 7],
            )
        (cp,) = PairwiseAnalysis(Database.of(store)).report(user=None, dataset="ds", n_boot=200).criteria
        assert cp.bradley_terry.n_pairs == len(pairs) == 36 >= SMALL_N and cp.agreement.n_units == 36
        assert cp.warnings == ()


def test_the_leaderboard_says_when_every_rank_agreement_ci_is_the_full_range(few_pairs):
    store, _ = few_pairs
    for s in store.samples.list("ds"):
        for rater, score in (("r1", int(s.id) % 5), ("r2", (int(s.id) * 3) % 5)):
            store.ratings.ensure_rater(rater)
            store.ratings.rate(rater, s.id, "cp", score)
    database = Database.of(store)
    view = Leaderboards(Agreement(database), PairwiseAnalysis(database)).view(
        user=None, dataset="ds", by="method", n_boot=300
    )
    defined = [a for a in view.board.agreement if a.reason is None and a.tau.ci_low == a.tau.ci_low]
    assert defined and all((a.tau.ci_low, a.tau.ci_high) == (-1.0, 1.0) for a in defined)
    assert agreement_notes(view)[-1] == (
        "Every rank agreement's 95% CI is the full range [-1, 1]: on 3 methods the resamples range from full "
        "disagreement to full agreement, so no tau here is told apart from chance; compare more methods, or rate "
        "more samples of each."
    )
