"""`masc-ui agreement` and the agreement use case list the catalogue metrics next to the others, with the same
bootstrap CIs: VQAScore and ITMScore for the PF criterion, FaceSim for the CP criterion (issue 13). The code takes
every stored metric; this proves it on stored values + human ratings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_dreambench  # noqa: E402

from masc_ui.cli import main  # noqa: E402
from masc_ui.datasets import read_layout  # noqa: E402
from masc_ui.workbench.agreement import Agreement  # noqa: E402
from masc_ui.workbench.database import Database  # noqa: E402
from masc_ui.workbench.ingest import ingest  # noqa: E402
from storage import open_store  # noqa: E402

CATALOGUE = ("vqascore", "itmscore", "facesim")


def _store_catalogue_values(data_dir: Path, tree: Path) -> None:
    """The 12 DreamBench++-shaped samples with their human ratings, plus a stored value of each catalogue metric
    per sample (a noisy copy of the mean CP/PF rating, so the statistics are defined)."""
    rng = np.random.default_rng(0)
    with open_store(None, data_dir) as store:
        ingest(store, "dbpp", "dreambench", read_layout("dreambench", tree))
        for sample in store.samples.list(dataset="dbpp"):
            for metric in CATALOGUE:
                store.metrics.record(
                    sample.id,
                    metric,
                    float(rng.uniform(0, 1)),
                    provenance={"model_id": f"demo/{metric}", "code_version": "test"},
                )


def test_cli_agreement_lists_the_catalogue_metrics_with_bootstrap_cis(tmp_path: Path, capsys):
    _store_catalogue_values(tmp_path / "data", write_dreambench(tmp_path / "dbpp"))
    common = ["--data-dir", str(tmp_path / "data"), "--dataset", "dbpp", "--n-boot", "200", "--json"]
    for criterion, expected in (("pf", {"vqascore", "itmscore"}), ("cp", {"facesim"})):
        assert main(["agreement", "--criterion", criterion, *common]) == 0
        rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
        assert expected <= set(rows), (criterion, sorted(rows))
        for metric in expected:
            row = rows[metric]
            assert row["n"] == 12 and row["n_raters"] == 2
            for stat in ("alpha", "spearman", "kendall", "pearson"):
                low, high = row[stat]["ci_low"], row[stat]["ci_high"]
                assert low is not None and high is not None and low <= row[stat]["value"] <= high, (metric, stat)


def test_use_case_table_has_the_same_rows(tmp_path: Path):
    _store_catalogue_values(tmp_path / "data", write_dreambench(tmp_path / "dbpp"))
    with open_store(None, tmp_path / "data") as store:
        table = Agreement(Database.of(store)).report(user=None, dataset="dbpp", criterion="pf", n_boot=100).table
    metrics = [r.metric for r in table.rows]
    assert {"vqascore", "itmscore", "facesim"} <= set(metrics)
    row = next(r for r in table.rows if r.metric == "vqascore")
    assert row.spearman.ci_low <= row.spearman.value <= row.spearman.ci_high
