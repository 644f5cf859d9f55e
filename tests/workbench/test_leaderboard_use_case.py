"""The leaderboard use case and `masc-ui leaderboard` on a stored synthetic dataset with known per-method means,
against direct pandas/numpy computations and scipy's Kendall tau."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from masc_ui.analysis import Estimate, HumanColumn
from masc_ui.cli import main
from masc_ui.errors import InputError
from masc_ui.workbench.agreement import Agreement
from masc_ui.workbench.database import Database
from masc_ui.workbench.leaderboard import Leaderboards, matrix_rows
from masc_ui.workbench.pairwise_analysis import PairwiseAnalysis
from storage import open_store


def leaderboards(database: Database) -> Leaderboards:
    """The leaderboard use case over `database` (as the workbench builds it)."""
    return Leaderboards(Agreement(database), PairwiseAnalysis(database))


TRUE_CP = {"a": 0.30, "b": 0.50, "c": 0.60, "d": 0.80}
TRUE_CLIP_I = {"a": 0.90, "b": 0.70, "c": 0.80, "d": 0.60}
TRUE_HUMAN_CP = {"a": 1.0, "b": 2.0, "c": 2.5, "d": 3.5}
METRIC_OFFSETS = (-0.10, -0.05, 0.0, 0.05, 0.10, 0.0, -0.02, 0.02)
"""Sum 0: each method's metric mean is exactly its true mean."""
RATING_OFFSETS = (-0.5, 0.0, 0.5, -0.5, 0.0, 0.5, 0.0, 0.0)
"""Sum 0: per-sample mean ratings (multiples of 0.5, so two integer raters give them) average to the true mean."""
N_BOOT = 300


def _pair(target: float) -> tuple[int, int]:
    """Two integer ratings whose mean is `target` (a multiple of 0.5)."""
    return math.floor(target), math.ceil(target)


@pytest.fixture()
def synth(tmp_path: Path) -> Path:
    """Dataset `synth`: methods a-d x 8 ratings-only samples with metrics cp, clip_i (one clip_i missing in b) and
    a judge `gpt4o_cp`; cp ratings by r1 and r2 on every sample, pf by r1 on half. Returns the data dir."""
    data = tmp_path / "data"
    with open_store(None, data) as store:
        for rater in ("r1", "r2"):
            store.ratings.ensure_rater(rater)
        for method in TRUE_CP:
            for i in range(8):
                s = store.samples.add(
                    "synth",
                    subject=f"subject{i % 4}",
                    category=("animal", "object")[i % 2],
                    method=method,
                    external_key=f"{method}/{i}",
                )
                prov = {"model_id": "synthetic", "code_version": "test"}
                store.metrics.record(s.id, "cp", TRUE_CP[method] + METRIC_OFFSETS[i], provenance=prov)
                if not (method == "b" and i == 2):  # its offset is 0: the mean stays exact
                    store.metrics.record(s.id, "clip_i", TRUE_CLIP_I[method] + METRIC_OFFSETS[::-1][i], provenance=prov)
                store.metrics.record(s.id, "gpt4o_cp", float((i + ord(method)) % 5), provenance=prov)
                low, high = _pair(TRUE_HUMAN_CP[method] + RATING_OFFSETS[i])
                store.ratings.rate("r1", s.id, "cp", low)
                store.ratings.rate("r2", s.id, "cp", high)
                if i % 2 == 0:
                    store.ratings.rate("r1", s.id, "pf", (i + "abcd".index(method)) % 5)
    return data


def _frame(data_dir: Path) -> pd.DataFrame:
    """One row per sample in id order: method, category, metrics, per-criterion mean over raters."""
    with open_store(None, data_dir) as store:
        samples = store.samples.list("synth")
        latest = store.metrics.latest_for([s.id for s in samples])
        ratings = store.ratings.current(dataset="synth")
    rows = []
    for s in samples:
        row = {"method": s.method, "category": s.category, **{m: v.value for m, v in latest.get(s.id, {}).items()}}
        for criterion in ("cp", "pf"):
            scores = [r.score for r in ratings if r.sample_id == s.id and r.criterion == criterion]
            row[f"human {criterion}"] = np.mean(scores) if scores else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _bootstrap_ci(values: np.ndarray, seed: np.random.SeedSequence) -> tuple[float, float]:
    """Percentile 95% CI of the mean over the values present, resampling the group's samples with replacement
    (numpy directly: one generator per group, resamples drawn in one block)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(N_BOOT, len(values)))
    means = np.array([np.nanmean(values[row]) if (~np.isnan(values[row])).any() else np.nan for row in idx])
    means = means[~np.isnan(means)]
    return tuple(np.percentile(means, [2.5, 97.5]))


def test_numbers_equal_a_direct_pandas_computation(synth):
    frame = _frame(synth)
    with Database.of(open_store(None, synth)) as database:
        view = leaderboards(database).view(user=None, dataset="synth", n_boot=N_BOOT, seed=0)
        database.store.close()
    board = view.board
    assert board.groups == ["a", "b", "c", "d"] and board.criteria == ("cp", "pf")
    assert set(board.metrics) == {"cp", "clip_i", "gpt4o_cp"}
    assert board.higher_is_better == {"cp": True, "clip_i": True, "gpt4o_cp": True}  # registry; judge default
    groups = frame.groupby("method")
    means, counts = groups.mean(numeric_only=True), groups.count()
    seeds = np.random.SeedSequence(0).spawn(4)
    for g, row in enumerate(board.rows):
        assert row.n == len(groups.get_group(row.group))
        assert row.metrics["cp"].mean.value == pytest.approx(TRUE_CP[row.group], abs=1e-12)
        assert row.metrics["clip_i"].mean.value == pytest.approx(TRUE_CLIP_I[row.group], abs=1e-12)
        assert row.humans["cp"].mean.value == pytest.approx(TRUE_HUMAN_CP[row.group], abs=1e-12)
        for name, cell in [*row.metrics.items(), *((f"human {c}", cell) for c, cell in row.humans.items())]:
            assert cell.mean.value == pytest.approx(means.loc[row.group, name], abs=1e-12), name
            assert cell.n == counts.loc[row.group, name], name
            values = frame.loc[frame.method == row.group, name].to_numpy(dtype=float)
            lo, hi = _bootstrap_ci(values, seeds[g])
            assert (cell.mean.ci_low, cell.mean.ci_high) == pytest.approx((lo, hi), abs=1e-12), name
    for name in ("cp", "clip_i", "gpt4o_cp", "human cp", "human pf"):
        expected = means[name].rank(method="min", ascending=False).astype(int).to_dict()
        cells = {r.group: (r.metrics[name] if name in r.metrics else r.humans[name.split()[1]]) for r in board.rows}
        assert {g: c.rank for g, c in cells.items()} == expected, name
    defined = 0
    for metric in board.metrics:
        for criterion in board.criteria:
            tau = stats.kendalltau(means[metric], means[f"human {criterion}"], variant="b").statistic
            assert board.rank_agreement(metric, criterion).tau.value == pytest.approx(tau, abs=1e-12, nan_ok=True)
            defined += not math.isnan(tau)
    assert defined == 6
    assert board.rank_agreement("cp", "cp").tau.value == pytest.approx(1.0)
    assert board.rank_agreement("clip_i", "cp").tau.value == pytest.approx(-2 / 3)


def test_plot_matrix_is_the_min_max_of_the_means(synth):
    frame = _frame(synth)
    with Database.of(open_store(None, synth)) as database:
        view = leaderboards(database).view(user=None, dataset="synth", n_boot=0, criteria=["cp"])
        database.store.close()
    means = frame.groupby("method").mean(numeric_only=True)
    headers, rows = matrix_rows(view)
    assert headers == ["method", "column", "higher_is_better", "mean", "normalized"]
    table = pd.DataFrame(rows, columns=headers).set_index(["method", "column"])
    for column in ("cp", "clip_i", "human cp"):
        col = means[column]
        expected = (col - col.min()) / (col.max() - col.min())
        for method, value in expected.items():
            assert table.loc[(method, column), "normalized"] == pytest.approx(value, abs=1e-12)
            assert table.loc[(method, column), "mean"] == pytest.approx(col[method], abs=1e-12)
    assert len(rows) == 4 * 4  # 4 methods x (3 metrics + human cp)


def test_extra_human_column_is_ranked_and_compared(synth):
    """An extra human column (what issue 17's Bradley-Terry strengths will be) is shown, ranked, and compared with
    each metric by Kendall tau-b (scipy), without a CI; a method it lacks gets an undefined cell."""
    strengths = {"a": -1.0, "b": 0.5, "c": 0.2}
    column = HumanColumn(
        "bt_cp", {g: Estimate(v, v - 0.3, v + 0.3) for g, v in strengths.items()}, {"a": 40, "b": 40, "c": 40}
    )
    with Database.of(open_store(None, synth)) as database:
        view = leaderboards(database).view(user=None, dataset="synth", n_boot=50, extra_columns=[column])
        database.store.close()
    board = view.board
    assert board.criteria == ("cp", "pf", "bt_cp")
    cells = {r.group: r.humans["bt_cp"] for r in board.rows}
    assert {g: c.rank for g, c in cells.items()} == {"a": 3, "b": 1, "c": 2, "d": None}
    assert cells["b"].mean == Estimate(0.5, 0.2, 0.8) and cells["b"].n == 40
    assert math.isnan(cells["d"].mean.value) and cells["d"].n == 0
    cp_means = [TRUE_CP[g] for g in "abc"]
    tau = stats.kendalltau(cp_means, [strengths[g] for g in "abc"], variant="b").statistic
    agreement = board.rank_agreement("cp", "bt_cp")
    assert agreement.n_groups == 3 and agreement.tau.value == pytest.approx(tau)
    assert math.isnan(agreement.tau.ci_low)
    assert [a.metric for a in board.agreement] == [m for m in board.metrics for _ in board.criteria]
    assert "human bt_cp" in view.render("md") and "human bt\\_cp" in view.render("latex")
    assert "human_bt_cp_mean" in view.render("csv")
    assert view.matrix.columns[-1] == "human bt_cp"
    with pytest.raises(InputError, match="already has a column 'cp'"):
        from masc_ui.analysis import with_human_column

        with_human_column(board, HumanColumn("cp", {}, {}))


def test_errors_name_the_problem(synth, tmp_path):
    with Database.of(open_store(None, synth)) as database:
        with pytest.raises(InputError, match="dataset 'nope' is not in the database; known datasets: synth"):
            leaderboards(database).view(user=None, dataset="nope")
        with pytest.raises(InputError, match="no values for metric"):
            leaderboards(database).view(user=None, dataset="synth", metrics=["dino_i"])
        with pytest.raises(InputError, match="n_boot"):
            leaderboards(database).view(user=None, dataset="synth", n_boot=10**6)
        view = leaderboards(database).view(user=None, dataset="synth", n_boot=0)
        with pytest.raises(InputError, match="format must be one of"):
            view.render("html")
        database.store.close()
    with Database.of(open_store(None, tmp_path / "empty")) as empty:
        with pytest.raises(InputError, match="the database has no samples yet"):
            leaderboards(empty).view(user=None, dataset=None)
        empty.store.close()


# --- masc-ui leaderboard ---------------------------------------------------------------------------------------


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["leaderboard", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_formats(synth, capsys, tmp_path):
    common = ("--dataset", "synth", "--data-dir", str(synth), "--n-boot", "100")
    code, md, _ = _cli(capsys, *common)
    assert code == 0 and md.startswith("Leaderboard by method: mean [95% percentile bootstrap CI")
    assert "| a " in md and "Rank agreement with the humans" in md and "tau vs human cp" in md
    rules = [ln for ln in md.splitlines() if ln.startswith("| -")]
    assert len(rules) == 2 and all(re.fullmatch(r":?-+:?", c.strip()) for ln in rules for c in ln.strip("|").split("|"))
    code, latex, _ = _cli(capsys, *common, "--format", "latex", "--by", "category")
    assert code == 0 and "\\toprule" in latex and "animal" in latex and "$\\tau_b$" in latex
    code, csv_text, _ = _cli(capsys, *common, "--format", "csv", "--metrics", "cp", "--criteria", "cp")
    board_csv, agreement_csv = csv_text.split("\n\n")
    board = pd.read_csv(io.StringIO(board_csv))
    assert list(board.method) == ["a", "b", "c", "d"]
    assert board.cp_mean.tolist() == pytest.approx([TRUE_CP[g] for g in "abcd"], abs=1e-12)
    assert board.human_cp_mean.tolist() == pytest.approx([TRUE_HUMAN_CP[g] for g in "abcd"], abs=1e-12)
    assert board.cp_rank.tolist() == [4, 3, 2, 1]
    agreement = pd.read_csv(io.StringIO(agreement_csv))
    assert agreement.loc[0, ["metric", "criterion", "n_groups", "tau"]].tolist() == ["cp", "cp", 4, 1.0]
    out = tmp_path / "board.csv"
    code, note, _ = _cli(capsys, *common, "--format", "csv", "-o", str(out))
    assert code == 0 and out.is_file() and (tmp_path / "board-rank-agreement.csv").is_file()
    assert "written to" in note


def test_cli_errors_are_one_line(synth, capsys):
    code, _, err = _cli(capsys, "--dataset", "nope", "--data-dir", str(synth))
    assert code == 2 and err.startswith("error: dataset 'nope' is not in the database") and err.count("\n") == 1
    code, _, err = _cli(capsys, "--dataset", "synth", "--data-dir", str(synth), "--criteria", "sc")
    assert code == 2 and "no values for criterion(s) ['sc']" in err


def test_every_command_help_renders():
    """argparse %-formats help strings: a bare % in one breaks `masc-ui --help`."""
    from masc_ui.cli import build_parser

    parser = build_parser()
    assert "leaderboard" in parser.format_help()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():
        assert command.format_help(), name
