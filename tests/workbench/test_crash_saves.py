"""Crash safety of Save: a saver SIGKILLed at random moments leaves no sample without its values and no value
without its masks (`bench/crash_saves.py` runs more cycles and prints the figures)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.crash_saves import run_save_kills  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs fork() and SIGKILL")


def test_sigkilled_saves_leave_whole_samples_sqlite(tmp_path):
    report = run_save_kills(None, tmp_path / "data", cycles=40, seed=2024)
    assert report.violations == [] and report.integrity == "ok"
    assert report.acknowledged >= 20 and report.samples >= 15  # the children really saved between kills
    assert report.values >= 4 * report.samples


@pytest.mark.postgres
def test_sigkilled_saves_leave_whole_samples_postgres(tmp_path, pg_schemas):
    report = run_save_kills(pg_schemas.new_url(), tmp_path / "data", cycles=15, seed=7, max_delay_s=0.2)
    assert report.violations == [] and report.acknowledged >= 10
