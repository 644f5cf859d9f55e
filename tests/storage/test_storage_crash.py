"""Crash safety: a writer SIGKILLed at random moments >= 100 times loses no acknowledged rating and
leaves an intact SQLite database (`bench/crash_ratings.py` runs 1,000 cycles and prints the figures)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.durability import run_kill_cycles  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs fork() and SIGKILL")


def test_sigkilled_writers_lose_nothing_sqlite(tmp_path):
    report = run_kill_cycles(None, tmp_path / "data", cycles=100, seed=2024)
    assert report.cycles == 100 and report.integrity == "ok" and report.missing == 0
    assert report.acknowledged >= 30  # the children really wrote between kills
    assert report.integrity_checks == 4


@pytest.mark.postgres
def test_sigkilled_writers_lose_nothing_postgres(tmp_path, pg_schemas):
    report = run_kill_cycles(pg_schemas.new_url(), tmp_path / "data", cycles=30, seed=7, max_delay_s=0.25)
    assert report.missing == 0 and report.acknowledged >= 15
