"""Leaderboard renderings (Markdown, CSV, LaTeX) and the plot-ready matrix, read back and checked."""

import io
import math

import numpy as np
import pandas as pd
import pytest

from masc_ui.analysis import AgreementData
from masc_ui.analysis.leaderboard import leaderboard
from masc_ui.analysis.leaderboard_matrix import leaderboard_matrix
from masc_ui.analysis.leaderboard_render import (
    RENDERERS,
    leaderboard_csv,
    leaderboard_latex,
    leaderboard_markdown,
    rank_agreement_csv,
)


@pytest.fixture(scope="module")
def board():
    rng = np.random.default_rng(0)
    quality = {"dream_booth": 0.2, "emu2": 0.5, "ip&adapter": 0.9}
    records = []
    for i in range(45):
        method = list(quality)[i % 3]
        q = quality[method] + rng.normal(scale=0.05)
        records.append(
            {
                "sample_id": str(i),
                "method": method,
                "metrics": {"cp": q, "lpips": 1 - q, "empty": 0.5 if method != "emu2" else None},
                "ratings": {"cp": {"g1": float(round(4 * q)), "g2": float(min(4, round(4 * q) + 1))}},
            }
        )
    return leaderboard(AgreementData.from_records(records), higher_is_better={"lpips": False}, n_boot=200, seed=1)


def test_csv_reads_back_with_pandas_and_equals_the_board(board):
    df = pd.read_csv(io.StringIO(leaderboard_csv(board)), keep_default_na=True)
    assert list(df["method"]) == board.groups
    assert list(df.columns[:2]) == ["method", "n"]
    for _, row in df.iterrows():
        r = board.row(row["method"])
        assert row["n"] == r.n
        for name, cell in [*r.metrics.items(), *((f"human_{c}", v) for c, v in r.humans.items())]:
            for part, value in (
                ("mean", cell.mean.value),
                ("ci_low", cell.mean.ci_low),
                ("ci_high", cell.mean.ci_high),
            ):
                assert (math.isnan(value) and math.isnan(row[f"{name}_{part}"])) or row[f"{name}_{part}"] == value
            assert row[f"{name}_n"] == cell.n
            assert (cell.rank is None and math.isnan(row[f"{name}_rank"])) or row[f"{name}_rank"] == cell.rank


def test_rank_agreement_csv(board):
    df = pd.read_csv(io.StringIO(rank_agreement_csv(board)))
    assert list(df.columns) == ["metric", "criterion", "n_groups", "tau", "ci_low", "ci_high"]
    assert len(df) == len(board.agreement) == 3
    row = df[(df.metric == "lpips") & (df.criterion == "cp")].iloc[0]
    assert row["tau"] == board.rank_agreement("lpips", "cp").tau.value == pytest.approx(1.0)
    assert row["n_groups"] == 3


def test_markdown_table(board):
    text = leaderboard_markdown(board)
    lines = text.splitlines()
    table = [line for line in lines if line.startswith("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header == ["method", "n", "cp ↑", "lpips ↓", "empty ↑", "human cp ↑"]
    assert set(table[1]) <= set("|-: ")
    best = board.row("ip&adapter").metrics["cp"]
    assert f"{best.mean.value:.3f} [{best.mean.ci_low:.3f}, {best.mean.ci_high:.3f}] (1)" in text
    assert "| emu2 " in text and "n/a" in text  # `empty` has no value for emu2
    assert "95% percentile bootstrap CI" in lines[0] and "200 resamples, seed 1" in lines[0]
    assert "Rank agreement" in text and "tau vs human cp" in text
    assert all(line.count("|") == table[0].count("|") for line in table[:5])


def test_latex_booktabs(board):
    text = leaderboard_latex(board)
    assert text.count("\\toprule") == 2 and text.count("\\midrule") == 2 and text.count("\\bottomrule") == 2
    assert "\\begin{tabular}{lrcccc}" in text
    assert "dream\\_booth" in text and "ip\\&adapter" in text  # escaped
    best = board.row("ip&adapter").metrics["cp"]
    assert f"\\textbf{{{best.mean.value:.3f}}} {{\\scriptsize [" in text
    assert "lpips $\\downarrow$" in text and "$\\tau_b$ vs human cp" in text
    body = [line for line in text.splitlines() if line.endswith("\\\\")]
    assert all(line.count(" & ") == 5 for line in body[:4])


def test_no_bootstrap_renders_without_brackets():
    records = [{"sample_id": str(i), "method": "abc"[i % 3], "metrics": {"cp": i / 10}} for i in range(9)]
    board = leaderboard(AgreementData.from_records(records), n_boot=0)
    text = leaderboard_markdown(board)
    assert "[" not in text.split("\n", 1)[1] and "no confidence intervals" in text
    assert "Rank agreement" not in text  # no criteria
    assert set(RENDERERS) == {"md", "csv", "latex"}
    assert all(isinstance(render(board), str) for render in RENDERERS.values())


def test_matrix_is_min_max_of_the_direction_adjusted_means(board):
    mx = leaderboard_matrix(board)
    assert mx.groups == tuple(board.groups)
    assert mx.columns == ("cp", "lpips", "empty", "human cp")
    assert mx.higher_is_better == (True, False, True, True)
    for k, (name, sign) in enumerate((("cp", 1), ("lpips", -1))):
        raw = np.array([board.row(g).metrics[name].mean.value for g in board.groups])
        np.testing.assert_allclose(mx.means[:, k], raw)
        adjusted = sign * raw
        np.testing.assert_allclose(mx.normalized[:, k], (adjusted - adjusted.min()) / (adjusted.max() - adjusted.min()))
    assert mx.normalized[board.groups.index("ip&adapter"), 1] == 1.0  # lowest lpips is best
    assert np.isnan(mx.normalized[:, 2]).all()  # constant where defined: no spread
    assert leaderboard_matrix(board, include_humans=False).columns == ("cp", "lpips", "empty")
