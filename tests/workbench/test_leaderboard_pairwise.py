"""The leaderboard's pairwise human columns (`bt_cp`, `bt_pf`) and its grid rows: the Bradley-Terry theta of
`pairwise_column`, per-method vote counts by direct count, Kendall tau-b against scipy, and the grid cells equal to
`masc-ui leaderboard`'s Markdown."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from masc_ui.cli import main
from masc_ui.workbench.agreement import Agreement, shown_name
from masc_ui.workbench.database import Database
from masc_ui.workbench.leaderboard import Leaderboards, agreement_rows, table_rows
from masc_ui.workbench.pairwise_analysis import PairwiseAnalysis
from masc_ui.workbench.users import AccessDenied, Account, Accounts
from storage import open_store
from tests.admin_data import METHODS, add_judged_dataset


def leaderboards(database: Database) -> Leaderboards:
    """The leaderboard use case over `database` (as the workbench builds it)."""
    return Leaderboards(Agreement(database), PairwiseAnalysis(database))


N_BOOT = 200


@pytest.fixture()
def judged(tmp_path: Path):
    store = open_store(None, tmp_path / "data")
    add_judged_dataset(store)
    s = store.samples.add("plain", subject="cat", method="alpha", external_key="k")  # a dataset nobody judged
    store.metrics.record(s.id, "cp", 0.5, provenance={"model_id": "synthetic", "code_version": "test"})
    yield tmp_path / "data", Database.of(store)
    store.close()


def _md_cells(text: str) -> list[list[str]]:
    """Body cells of every Markdown table in `text` (the rule lines dropped)."""
    rows = [
        [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
        for line in text.splitlines()
        if line.startswith("|") and not line.startswith("| -")
    ]
    return rows


def test_pairwise_columns_hold_the_bradley_terry_fit_and_vote_counts(judged):
    _, database = judged
    columns = leaderboards(database).pairwise_columns(user=None, dataset="lb", n_boot=N_BOOT, seed=2)
    assert [c.name for c in columns] == ["bt_cp", "bt_pf"]
    source = PairwiseAnalysis(database).input(user=None, dataset="lb")
    for column, criterion in zip(columns, ("cp", "pf")):
        fit = PairwiseAnalysis(database).column(user=None, dataset="lb", criterion=criterion, n_boot=N_BOOT, seed=2)
        assert fit.reason is None and dict(column.values) == dict(fit.values)
        counted = {
            m: sum(
                1 for j in source.data.judgments if j.criterion == criterion and m in (j.left_method, j.right_method)
            )
            for m in METHODS
        }
        assert dict(column.n) == counted == {m: 2 * 12 for m in METHODS}  # 4 references x 3 raters x 2 partners
    assert min(columns[0].values, key=lambda m: -columns[0].values[m].value) == "alpha"


def test_leaderboard_appends_them_ranks_them_and_compares_every_metric(judged):
    _, database = judged
    view = leaderboards(database).view(user=None, dataset="lb", n_boot=N_BOOT, seed=2)
    assert view.board.criteria == ("cp", "bt_cp", "bt_pf")
    theta = {
        m: e.value
        for m, e in PairwiseAnalysis(database).column(user=None, dataset="lb", n_boot=N_BOOT, seed=2).values.items()
    }
    groups = view.board.groups
    for metric in ("cp", "clip_i"):
        means = [view.board.row(g).metrics[metric].mean.value for g in groups]
        expected = stats.kendalltau(means, [theta[g] for g in groups], variant="b").statistic
        assert view.board.rank_agreement(metric, "bt_cp").tau.value == pytest.approx(expected)
    assert view.board.rank_agreement("cp", "bt_cp").tau.value == pytest.approx(1.0)
    assert view.board.rank_agreement("clip_i", "bt_cp").tau.value == pytest.approx(-1.0)
    assert [view.board.row(g).humans["bt_cp"].rank for g in groups] == [1, 2, 3]
    assert "human bt_cp" in view.matrix.columns[-2]
    # metrics only, or asked not to: no pairwise column; a dataset without judgments: none either
    assert leaderboards(database).view(user=None, dataset="lb", n_boot=0, criteria=[]).board.criteria == ()
    assert leaderboards(database).view(user=None, dataset="lb", n_boot=0, pairwise=False).board.criteria == ("cp",)
    assert leaderboards(database).pairwise_columns(user=None, dataset="plain") == []
    assert leaderboards(database).view(user=None, dataset="plain", n_boot=0).board.criteria == ()


def test_pairwise_columns_are_for_admins(judged):
    _, database = judged
    database.accounts = Accounts({"rita": Account("rita", "unused", "rater")})
    with pytest.raises(AccessDenied):
        leaderboards(database).pairwise_columns(user="rita", dataset="lb")


def test_grid_rows_equal_the_cli_markdown_cell_for_cell(judged, capsys):
    data_dir, database = judged
    view = leaderboards(database).view(user=None, dataset="lb", n_boot=N_BOOT, seed=4)
    assert (
        main(["leaderboard", "--dataset", "lb", "--data-dir", str(data_dir), "--n-boot", str(N_BOOT), "--seed", "4"])
        == 0
    )
    md = capsys.readouterr().out
    cells = _md_cells(md)
    headers, rows = table_rows(view)
    a_headers, a_rows = agreement_rows(view)
    keys = {shown_name(m): m for m in view.board.metrics}  # the grid names metrics as people read them

    def as_cli(cell: str) -> str:
        name, _, arrow = cell.rpartition(" ")
        cell = f"{keys[name]} {arrow}" if name in keys else keys.get(cell, cell)
        return re.sub(r" \[\d+\]$", "", cell)  # the grid's marks of notes under it

    expected = [headers, *[[str(c) for c in r] for r in rows], a_headers, *a_rows]
    assert cells == [[as_cli(c) for c in r] for r in expected]
    assert "MaSC CP ↑" in headers and [r[0] for r in a_rows][:2] == ["MaSC CP", "CLIP-I"]
    assert any("human bt_cp" in h for h in headers) and "tau vs human bt_pf" in a_headers
    code = main(
        [
            "leaderboard",
            "--dataset",
            "lb",
            "--data-dir",
            str(data_dir),
            "--n-boot",
            str(N_BOOT),
            "--seed",
            "4",
            "--format",
            "csv",
        ]
    )
    board = pd.read_csv(io.StringIO(capsys.readouterr().out.split("\n\n")[0]))
    assert code == 0 and board.human_bt_cp_mean.tolist() == pytest.approx(
        [view.board.row(g).humans["bt_cp"].mean.value for g in board.method]
    )
    assert np.all(board.human_bt_cp_n == 24)
