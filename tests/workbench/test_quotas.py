"""Quotas: per-client token buckets, and the cap on bytes one dataset takes without logins."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.workbench.quotas import RateLimited, RateLimits


def test_token_bucket_per_client_and_kind():
    now = [0.0]
    limits = RateLimits({"save": (3, 60.0)}, clock=lambda: now[0])
    for _ in range(3):
        limits.take("user:a", "save")
    with pytest.raises(RateLimited, match="wait 20 s"):
        limits.take("user:a", "save")
    limits.take("user:b", "save")  # another client has its own bucket
    limits.take("user:a", "unlimited-kind")
    now[0] += 20.0  # one request back every 60 / 3 s
    limits.take("user:a", "save")
    with pytest.raises(RateLimited):
        limits.take("user:a", "save")


def _noisy_png(path, seed: int, side: int = 700) -> None:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 255, (side, side, 3), dtype=np.uint8)).save(path)


def test_without_logins_a_dataset_holds_at_most_its_cap(demo_settings, tmp_path):
    from masc_ui.workbench import build_workbench

    ref, out, other = tmp_path / "ref.png", tmp_path / "out.png", tmp_path / "other.png"
    for i, p in enumerate((ref, out, other)):
        _noisy_png(p, i)  # about 1.5 MB each: noise does not compress
    wb = build_workbench(demo_settings.replace(anonymous_dataset_mb=4))
    try:
        wb.saving.save(wb.scoring.make_sample([ref], out, "a toy", "toy"), user=None, dataset="d", names=["clip_i"])
        with pytest.raises(InputError, match="at most 4 MiB per dataset"):
            wb.saving.save(
                wb.scoring.make_sample([ref], other, "a toy", "toy"), user=None, dataset="d", names=["clip_i"]
            )
        wb.saving.save(wb.scoring.make_sample([ref], other, "a toy", "toy"), user=None, dataset="d2", names=["clip_i"])
    finally:
        wb.close()
    with_logins = build_workbench(demo_settings.replace(anonymous_dataset_mb=1, users="ada:pw-ada-12:admin"))
    try:  # with logins, admins are trusted: no cap
        with_logins.saving.save(
            with_logins.scoring.make_sample([ref], out, "a toy", "toy"), user="ada", dataset="d", names=["clip_i"]
        )
    finally:
        with_logins.close()
