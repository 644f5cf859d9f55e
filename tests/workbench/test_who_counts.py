"""Who counts (use cases, SQLite and PostgreSQL): agreement, leaderboard and pairwise rankings take an explicit rater
selection (all, all but the marked raters, a list), and every table and report says which raters it counts."""

from __future__ import annotations

import json

import pytest
from gold_samples import save_samples

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench import build_workbench
from masc_ui.workbench.rater_selection import RaterSelection
from storage import ExternalPairJudgment

TRUTH = [4, 0, 3, 1, 4, 0, 3, 1, 4, 0, 3, 1]
"""Careful scores of 12 samples of methods m1, m2 by turns: m1 gets 4 and 3, m2 gets 0 and 1."""


@pytest.fixture()
def rated(demo_settings: Settings, database_url: str | None, tmp_path):
    wb = build_workbench(demo_settings.replace(database_url=database_url))
    ids = save_samples(wb, tmp_path / "img", 12)
    for name in ("ann", "ben", "cat"):
        wb.database.store.ratings.ensure_rater(name)
    for k, (sid, score) in enumerate(zip(ids, TRUTH, strict=True), 1):
        wb.ratings.submit("ann", sid, {"cp": score, "pf": score}, seconds_spent=6.0, presentation_order=k)
        wb.ratings.submit("ben", sid, {"cp": score, "pf": 2}, seconds_spent=7.0, presentation_order=k)
        wb.ratings.submit("cat", sid, {"cp": 2, "pf": 2}, seconds_spent=0.5, presentation_order=k)  # marked
    yield wb, ids
    wb.close()


def test_the_agreement_table_counts_the_raters_chosen(rated):
    wb, _ = rated
    every = wb.agreement.view(user=None, dataset="d", criterion="cp", n_boot=0)
    assert every.text.splitlines()[0] == "raters counted: all"
    humans = next(r for r in every.table.rows if r.is_human)
    assert humans.n_raters == 3
    unmarked = wb.agreement.view(user=None, dataset="d", criterion="cp", n_boot=0, raters=RaterSelection("unmarked"))
    (left_out,) = unmarked.counted.left_out
    assert left_out[0] == "cat" and "identical answers in a row" in left_out[1]
    assert unmarked.text.splitlines()[0].startswith("raters counted: all but the marked ones (left out: cat: ")
    humans = next(r for r in unmarked.table.rows if r.is_human)
    assert humans.n_raters == 2 and humans.alpha.value == pytest.approx(1.0)
    listed = wb.agreement.report(
        user=None, dataset="d", criterion="cp", n_boot=0, raters=RaterSelection.parse("ann, ben")
    )
    assert listed.text.splitlines()[0] == "raters counted: only ann, ben"
    assert listed.text.splitlines()[1:] == unmarked.text.splitlines()[1:]  # the same ratings, the same numbers
    assert json.loads(listed.to_json())["raters"] == {
        "selection": "list",
        "names": ["ann", "ben"],
        "left_out": [],
        "text": "raters counted: only ann, ben",
    }


def test_the_leaderboard_and_every_export_say_who_counts(rated):
    wb, _ = rated
    every = wb.leaderboard.view(user=None, dataset="d", n_boot=0, pairwise=False)
    means = {r.group: r.humans["cp"].mean.value for r in every.board.rows}
    assert means == pytest.approx({"m1": (3.5 * 2 + 2) / 3, "m2": (0.5 * 2 + 2) / 3})
    chosen = wb.leaderboard.view(user=None, dataset="d", n_boot=0, pairwise=False, raters=RaterSelection("unmarked"))
    assert {r.group: r.humans["cp"].mean.value for r in chosen.board.rows} == pytest.approx({"m1": 3.5, "m2": 0.5})
    said = chosen.counted.text()
    md = chosen.render("md").splitlines()
    assert md[1] == said[0].upper() + said[1:] + "."
    latex = chosen.render("latex").splitlines()
    assert latex[0].startswith("% Leaderboard by method") and latex[1] == "% " + said[0].upper() + said[1:] + "."
    rows = chosen.render("csv").splitlines()
    assert rows[0].endswith(",raters") and all(said in row for row in rows[1:])
    assert chosen.rank_agreement_csv().splitlines()[0] == "metric,criterion,n_groups,tau,ci_low,ci_high,raters"
    assert "Raters counted: all." in every.render("md")


def test_pairwise_rankings_count_the_raters_chosen(rated):
    wb, ids = rated
    store = wb.database.store
    m1, m2 = ids[0::2], ids[1::2]
    votes = {"ann": ("left", "left", "right"), "ben": ("left", "left", "left"), "cat": ("right", "right", "right")}
    for name, winners in votes.items():
        items = [ExternalPairJudgment(a, b, "cp", w) for a, b, w in zip(m1[:3], m2[:3], winners, strict=True)]
        store.pairwise.import_external(name, items)
    every = wb.pairwise_analysis.report(user=None, dataset="d", criterion="cp", n_boot=0)
    chosen = RaterSelection.parse("ann,cat")
    some = wb.pairwise_analysis.report(user=None, dataset="d", criterion="cp", n_boot=0, raters=chosen)
    assert (every.criteria[0].n_judgments, some.criteria[0].n_judgments) == (9, 6)
    assert every.criteria[0].bradley_terry.rank["m1"] == 1 and some.criteria[0].bradley_terry.rank["m2"] == 1
    assert some.text().splitlines()[0].endswith("; raters counted: only ann, cat")
    assert some.to_dict()["raters"]["names"] == ["ann", "cat"] and every.to_dict()["raters"]["selection"] == "all"
    board = wb.leaderboard.view(user=None, dataset="d", n_boot=0, raters=chosen)
    bt = {r.group: r.humans["bt_cp"].rank for r in board.board.rows}
    assert bt == {"m1": 2, "m2": 1}  # the leaderboard's pairwise column counts the same raters
    assert "Raters counted: only ann, cat." in board.render("md")


def test_a_bad_selection_is_refused(rated):
    wb, _ = rated
    with pytest.raises(InputError, match="no answers of 'zed' in dataset 'd'; raters with answers: ann, ben, cat"):
        wb.agreement.view(user=None, dataset="d", criterion="cp", n_boot=0, raters=RaterSelection.parse("ann,zed"))
    with pytest.raises(InputError, match="leaving the marked raters out needs a dataset"):
        wb.agreement.view(user=None, dataset=None, criterion="cp", n_boot=0, raters=RaterSelection("unmarked"))
    with pytest.raises(InputError, match="rater selection must be one of all, unmarked, list"):
        RaterSelection("some")
    assert RaterSelection.parse(" ALL ") == RaterSelection() and RaterSelection.parse("") == RaterSelection()
