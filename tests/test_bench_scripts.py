"""The benchmark scripts still run against the current app and use cases (an endpoint's arguments or a rating rule
that changed once left `bench/rating_load.py` measuring nothing but refusals). Smallest settings; no timing is
asserted — only that the script completes its protocol and finds every acknowledged rating stored."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rating_load_runs_its_protocol_end_to_end():
    done = subprocess.run(
        [
            sys.executable,
            "bench/rating_load.py",
            "--seconds",
            "3",
            "--raters",
            "2",
            "--backends",
            "sqlite",
            "--modes",
            "per-rater",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("sqlite"))
    assert "acknowledged ratings all present: yes" in line and "submits" in line and "errors" not in done.stdout
    assert int(line.split("saves")[1].split()[0]) >= 1, line  # the admin's saves went through too
    server, clients = (float(line.split(f"{who} ")[1].split(" ms")[0]) for who in ("server", "clients"))
    assert server > 0 and clients > 0 and "longest GC pause" in line, line


def test_rater_state_measures_each_size():
    done = subprocess.run(
        [sys.executable, "bench/rater_state.py", "--sizes", "20:5,40:10"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = [x.split() for x in done.stdout.splitlines() if x.startswith("sqlite")]
    assert [(x[1], x[3]) for x in lines] == [("20", "160"), ("40", "320")]  # 2 criteria x 16 raters x rated each
    assert all(float(x[x.index("rater_screen") + 1]) > 0 and float(x[-2]) > 0 for x in lines)
