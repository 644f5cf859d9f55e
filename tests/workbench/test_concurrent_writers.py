"""Several plain processes writing the same things at once (issue 12): two `masc-ui import` runs of one manifest,
two `masc-ui batch` runs of one dataset, on SQLite and PostgreSQL. Nothing is stored twice and the import counts
add up to what was stored."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import import_manifest, write_manifest  # noqa: E402

from storage import open_store  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
        OMP_NUM_THREADS="1",
        TQDM_DISABLE="1",
    )
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _together(commands: list[list[str]]) -> list[subprocess.CompletedProcess]:
    """Start every command at once, wait for all; their outputs."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "masc_ui", *c],
            cwd=ROOT,
            env=_env(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for c in commands
    ]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def _db_args(data_dir: Path, url: str | None) -> list[str]:
    return ["--data-dir", str(data_dir)] + (["--db", url] if url else [])


@pytest.mark.slow
def test_two_imports_of_one_manifest_store_everything_once(database_url, tmp_path: Path):
    manifest = write_manifest(tmp_path / "m", subjects=4, outputs=10)
    n = 40
    data = tmp_path / "data"
    with open_store(database_url, data):
        pass  # the schema exists before both start (migrations at open are tested elsewhere)
    runs = _together([["import", "manifest", str(manifest), "--dataset", "d", *_db_args(data, database_url)]] * 2)
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    added = [int(re.search(r"samples (\d+) imported, (\d+) already present", r.stdout).group(1)) for r in runs]
    present = [int(re.search(r"samples (\d+) imported, (\d+) already present", r.stdout).group(2)) for r in runs]
    assert sum(added) == n and [a + p for a, p in zip(added, present)] == [n, n]  # honest counts
    with open_store(database_url, data) as store:
        samples = store.samples.list("d")
        assert len(samples) == n
        versions = [
            len(store.masks.history(s.id, role, 0 if role == "output" else 0))
            for s in samples
            for role in ("reference", "output")
        ]
        assert versions == [1] * (2 * n)  # each imported mask once, never a second version of the same bytes


@pytest.mark.slow
def test_two_plain_batch_processes_write_each_value_once(database_url, demo_weights: Path, tmp_path: Path):
    data = tmp_path / "data"
    with open_store(database_url, data) as store:
        import_manifest(store, "d", write_manifest(tmp_path / "m", subjects=3, outputs=4))
    args = [
        "batch",
        "--dataset",
        "d",
        "--metrics",
        "clip_i,dino_i",
        "--profile",
        "demo",
        "--demo-weights-dir",
        str(demo_weights),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--batch-size",
        "2",
        *_db_args(data, database_url),
    ]
    runs = _together([args, args])
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    with open_store(database_url, data) as store:
        identities = Counter()
        for sample in store.samples.list("d"):
            for v in store.metrics.history(sample.id):
                identities[(sample.id, v.metric, v.provenance_key, v.mask_version_ids)] += 1
        assert len(identities) == 12 * 2 and set(identities.values()) == {1}
