"""Batch scoring as real processes: killed (SIGKILL) or interrupted (Ctrl-C) runs resume without computing
anything twice; two `accelerate launch` CPU processes share one PostgreSQL database."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import import_manifest, write_manifest  # noqa: E402

from storage import open_store  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
METRICS = "cp,pf,clip_i"


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


def _batch_args(demo_weights: Path, data_dir: Path, db: str | None = None, batch_size: int = 1) -> list[str]:
    args = [
        "--dataset",
        "d",
        "--metrics",
        METRICS,
        "--profile",
        "demo",
        "--demo-weights-dir",
        str(demo_weights),
        "--data-dir",
        str(data_dir),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--batch-size",
        str(batch_size),
    ]
    return args + (["--db", db] if db else [])


def _value_counts(store) -> dict[tuple[int, str], int]:
    counts: dict[tuple[int, str], int] = {}
    for sample in store.samples.list("d"):
        for v in store.metrics.history(sample.id):
            counts[sample.id, v.metric] = counts.get((sample.id, v.metric), 0) + 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_interrupted_run_resumes_without_recomputing(how, demo_weights: Path, tmp_path: Path):
    data_dir = tmp_path / "data"
    with open_store(None, data_dir) as store:
        # Enough samples that the run outlasts the poll below on an idle machine (the signal must arrive midway).
        import_manifest(store, "d", write_manifest(tmp_path / "m", subjects=4, outputs=24))
    total = 96 * 3
    proc = subprocess.Popen(
        [sys.executable, "-m", "masc_ui", "batch", *_batch_args(demo_weights, data_dir)],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = 0
    with open_store(None, data_dir) as store:
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            seen = sum(_value_counts(store).values())
            if seen >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(how)
        output, _ = proc.communicate(timeout=120)
        at_stop = _value_counts(store)
    assert 3 <= seen and sum(at_stop.values()) < total, f"the run was not interrupted midway:\n{output}"
    if how == signal.SIGINT:
        assert proc.returncode == 130 and "interrupted" in output
    else:
        assert proc.returncode == -signal.SIGKILL
    resumed = subprocess.run(
        [sys.executable, "-m", "masc_ui", "batch", *_batch_args(demo_weights, data_dir, batch_size=4)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    done_before = {m: sum(1 for (_, metric) in at_stop if metric == m) for m in METRICS.split(",")}
    assert (
        "already scored before this run: " + ", ".join(f"{m} {n}" for m, n in done_before.items())
    ) in resumed.stdout
    with open_store(None, data_dir) as store:
        final = _value_counts(store)
    assert len(final) == total and set(final.values()) == {1}, "a (sample, metric) was computed twice or never"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.postgres
@pytest.mark.slow
def test_two_accelerate_processes_share_postgres(postgres_url: str, demo_weights: Path, tmp_path: Path):
    data_dir = tmp_path / "data"
    with open_store(postgres_url, data_dir) as store:
        import_manifest(store, "d", write_manifest(tmp_path / "m", subjects=3, outputs=4))
    # accelerate's `--cpu` launches several processes only through MPI; `--multi_gpu` is its torchrun launcher,
    # which on a machine without GPUs (and with --device cpu) gives Accelerate's MULTI_CPU (gloo) state.
    launch = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(_free_port()),
        "-m",
        "masc_ui",
        "batch",
        *_batch_args(demo_weights, data_dir, db=postgres_url, batch_size=2),
    ]
    run = subprocess.run(launch, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "(process 1/2)" in run.stdout and "(process 2/2)" in run.stdout
    assert run.stdout.count("scored now: 6 samples") == 2  # ids split evenly over the two shards
    with open_store(postgres_url, data_dir) as store:
        counts = _value_counts(store)
    assert len(counts) == 12 * 3 and set(counts.values()) == {1}
    again = subprocess.run(launch, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout.count("scored now: 0 samples") == 2, (
        again.stdout[-3000:] + again.stderr[-6000:]
    )
