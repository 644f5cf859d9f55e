"""The DreamBench++ judge through the dataset commands: the published ratings imported as `dbpp_cp` / `dbpp_pf`,
the same metrics computed by `masc-ui batch` against an OpenAI-compatible server on loopback (a rerun asks
nothing, `--retry-failed` asks the failures again), then agreement, leaderboard and export read them."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_dreambench  # noqa: E402

from masc_ui.cli import main  # noqa: E402
from storage import open_store  # noqa: E402
from tests.openai_server import FakeOpenAI  # noqa: E402


@pytest.fixture()
def server(monkeypatch):
    fake = FakeOpenAI()
    fake.default = lambda body: ("answer", "Score: 2")
    for name, value in {
        "MASC_JUDGE_BASE_URL": fake.url,
        "MASC_JUDGE_API_KEY": "test-key",
        "MASC_DBPP_API_MODEL": "gpt-4o-2024-05-13",
        "MASC_JUDGE_BACKOFF_S": "0.01",
        "MASC_JUDGE_MAX_ATTEMPTS": "1",
        "MASC_JUDGE_WORKERS": "1",
    }.items():
        monkeypatch.setenv(name, value)
    yield fake
    fake.close()


def test_published_and_computed_judge_values_flow_through_every_command(tmp_path, server, demo_weights, capsys):
    common = ["--data-dir", str(tmp_path / "data")]
    root = write_dreambench(tmp_path / "dbpp")
    assert main(["import", str(root), "--dataset", "dbpp", "--format", "dreambench", *common]) == 0
    assert "metric values 24 imported" in capsys.readouterr().out
    server.script = [("status", 500)]  # the first request fails: an `error:` value
    batch = ["batch", "--dataset", "dbpp", "--metrics", "dbpp_cp,dbpp_pf", "--profile", "demo", "--device", "cpu"]
    batch += ["--demo-weights-dir", str(demo_weights), *common]
    assert main(batch) == 0
    assert "scored now: 12 samples, 24 values written" in capsys.readouterr().out
    assert len(server.requests) == 24
    assert main(batch) == 0 and "scored now: 0 samples" in capsys.readouterr().out
    assert len(server.requests) == 24  # a rerun asks nothing
    assert main([*batch, "--retry-failed"]) == 0
    assert "scored now: 1 samples, 1 values written" in capsys.readouterr().out
    assert len(server.requests) == 25

    with open_store(None, tmp_path / "data") as store:
        sample = store.samples.get_by_key("dbpp", "dreambooth_sd/object_03_red_backpack-1")
        history = [v for v in store.metrics.history(sample.id) if v.metric == "dbpp_cp"]
        published, computed = sorted(history, key=lambda v: v.provenance.code_version != "external")
        assert published.value == 2.0 and published.provenance.model_id == "gpt-4o-2024-05-13"
        assert computed.value == 2.0 and computed.provenance.model_id == "gpt-4o-2024-05-13"
        assert computed.extras["answer"] == "Score: 2" and computed.provenance.device == "api"
        for key in ("template_version", "template_sha256", "criterion", "scale", "range"):
            assert published.provenance.params[key] == computed.provenance.params[key], key

    agreement = ["agreement", "--dataset", "dbpp", "--metrics", "dbpp_cp,dbpp_pf", "--n-boot", "0", "--json"]
    assert main([*agreement, *common]) == 0
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["dbpp_cp"]["n"] == 12 and rows["dbpp_pf"]["n_raters"] == 2
    assert main(["leaderboard", "--dataset", "dbpp", "--metrics", "dbpp_cp", "--n-boot", "0", *common]) == 0
    board = capsys.readouterr().out
    assert "| dbpp_cp ↑ |" in board and "| dreambooth_sd  | 6   | 2.00 (1)  |" in board
    target = tmp_path / "export.csv"
    assert main(["export", "-o", str(target), "--dataset", "dbpp", *common]) == 0
    rows = list(csv.DictReader(target.open()))
    assert len(rows) == 12 and any("dbpp_cp" in k for k in rows[0]) and any("dbpp_pf" in k for k in rows[0])
    assert "test-key" not in target.read_text()
