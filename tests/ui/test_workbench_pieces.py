"""Workbench pieces without a server: logins, examples, profile resolution, score rows, launch safety settings."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.metrics.sample import MetricValue
from masc_ui.settings import Settings
from masc_ui.workbench import ScoreReport, ScoreRow, build_workbench, sample_fingerprint
from masc_ui.workbench.examples import EXAMPLES_DIR, list_examples, load_example
from masc_ui.workbench.profile import ResolvedProfile, resolve_profile


def test_examples_are_listed_and_load_with_masks_of_their_image_size():
    names = [n for _, n in list_examples()]
    assert names == ["cat-on-grass", "coffee-on-bricks"]
    from PIL import Image

    for name in names:
        ex = load_example(name)
        assert ex.prompt and ex.subject and ex.ref_mask.dtype == bool
        assert ex.ref_mask.shape == Image.open(ex.ref).size[::-1]
        assert ex.out_mask.shape == Image.open(ex.out).size[::-1]
        assert 0.05 < ex.out_mask.mean() < 0.9 and max(Image.open(ex.ref).size) <= 512
    with pytest.raises(InputError, match="does not exist"):
        load_example("../secrets")


def test_make_assets_is_deterministic(tmp_path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_assets", EXAMPLES_DIR.parents[1] / "scripts" / "make_assets.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_assets"] = mod  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop("make_assets", None)
    folder = mod.build(mod.PAIRS[0], tmp_path)
    committed = EXAMPLES_DIR / mod.PAIRS[0].name
    for f in ("ref_mask.png", "out_mask.png", "meta.json"):
        assert (folder / f).read_bytes() == (committed / f).read_bytes(), f


def test_auto_profile_falls_back_to_demo_offline_with_a_reason(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    p = resolve_profile(Settings(profile="auto", data_dir=tmp_path))
    assert p.name == "demo" and p.requested == "auto" and "could not be loaded" in p.reason
    assert resolve_profile(Settings(profile="fast")) == ResolvedProfile("fast", "fast", None)


def test_score_rows_show_na_with_reason_and_x100():
    row = ScoreRow("cp", "MaSC CP", None, "cp needs a reference mask", -1.0, 1.0, True, "conv")
    assert row.text() == "n/a (cp needs a reference mask)" and row.range_text == "[-1, 1]"
    ok = ScoreRow("pickscore", "PickScore", 21.5, None, -100.0, 100.0, True, "conv")
    assert ok.text() == "21.50" and ok.text(x100=True) == "2150" and ok.direction == "higher is better"
    tiny = ScoreRow("vqascore", "VQAScore", 2.49e-09, None, 0.0, 1.0, True, "conv")
    assert tiny.text() == "2.490e-09" and tiny.text(x100=True) == "2.490e-07"  # never 0.0000
    from masc_ui.ui.score_table import score_table_html

    html = score_table_html(ScoreReport([row, ok]), demo=True)
    assert 'title="conv"' in html and "n/a (cp needs a reference mask)" in html and "demo weights" in html


def test_make_sample_validates_inputs(demo_settings):
    wb = build_workbench(demo_settings)
    ex = load_example("cat-on-grass")
    with pytest.raises(InputError, match="reference image is missing"):
        wb.scoring.make_sample([], ex.out, "p", "cat")
    with pytest.raises(InputError, match="output image is missing"):
        wb.scoring.make_sample([ex.ref], None, "p", "cat")
    with pytest.raises(InputError, match="mask of the output must be 2-D"):
        wb.scoring.make_sample([ex.ref], ex.out, "p", "cat", [ex.ref_mask], np.zeros((2, 2, 2)))
    s = wb.scoring.make_sample([ex.ref], ex.out, "  p ", " ", [ex.ref_mask], ex.out_mask)
    assert s.prompt == "p" and s.subject is None and s.ref_masks[0].dtype == np.float32
    other = wb.scoring.make_sample([ex.ref], ex.out, "p", None, [ex.ref_mask], None)
    assert sample_fingerprint(s) != sample_fingerprint(other)
    assert sample_fingerprint(s) == sample_fingerprint(
        wb.scoring.make_sample([ex.ref], ex.out, "p", None, [ex.ref_mask], ex.out_mask)
    )


def test_rating_submit_refuses_missing_scores_without_writing(demo_settings):
    wb = build_workbench(demo_settings)
    ex = load_example("cat-on-grass")
    sid = wb.recorder.save(
        wb.scoring.make_sample([ex.ref], ex.out, "p", "cat"),
        {"cp": MetricValue("cp", math.nan, "no mask")},
        user=None,
        dataset="d",
    ).sample_id
    wb.database.store.ratings.ensure_rater("zoe")
    with pytest.raises(InputError, match="prompt following"):
        wb.ratings.submit("zoe", sid, {"cp": 2, "pf": None})
    assert wb.ratings.ratings_of("zoe") == []
    with pytest.raises(InputError, match="reason box"):
        wb.ratings.submit("zoe", sid, {}, status="flagged")  # a flag needs a reason
    assert wb.ratings.ratings_of("zoe") == []
    wb.ratings.submit("zoe", sid, {}, status="flagged", reason="  the output\n is blank ")
    assert {(r.status, r.note) for r in wb.ratings.ratings_of("zoe")} == {("flagged", "the output is blank")}
    stored = wb.database.store.metrics.history(sid)
    assert stored[0].value is None and stored[0].reason == "no mask"
    wb.close()


def test_a_refused_rating_write_is_reported_once_and_stores_nothing(demo_settings, tmp_path):
    """The storage layer retries a busy database itself; the use case adds no loop of its own: a failure
    reaches the rater as one StoreError (the UI keeps the task on screen)."""
    from masc_ui.workbench.database import Database, StoreError
    from masc_ui.workbench.ratings import RatingTasks
    from storage import StorageBusy, open_store

    with open_store(None, tmp_path / "db") as store:
        calls = []

        def busy(*args, **kwargs):
            calls.append(1)
            raise StorageBusy("the database stayed locked by other writers for more than 120 s")

        store.ratings.rate_sample = busy
        with pytest.raises(StoreError, match="stayed locked"):
            RatingTasks(Database.of(store), demo_settings).submit("a", 1, {"cp": 1, "pf": 2})
        assert calls == [1]


def test_launch_settings_are_locked_down(tmp_path: Path):
    from masc_ui.ui.launch import ASSETS_DIR, launch_kwargs

    s = Settings(data_dir=tmp_path / "data", max_upload_mb=7, users="a:b")
    kw = launch_kwargs(s)
    assert kw["share"] is False and kw["enable_monitoring"] is False and kw["ssr_mode"] is False
    assert kw["max_file_size"] == "7mb" and kw["allowed_paths"] == [str(ASSETS_DIR)]
    assert str(tmp_path / "data") in kw["blocked_paths"]
    assert str(s.resolved_demo_weights_dir) in kw["blocked_paths"]
    assert kw["show_error"] is False  # unexpected errors reach the browser without their text
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    def check(name: str, password: str) -> bool:  # in a thread of its own: other tests may leave a loop running here
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, kw["auth"](name, password)).result()

    assert check("a", "b") and not check("a", "x")
    assert "auth" not in launch_kwargs(Settings(data_dir=tmp_path))


def test_ratings_only_samples_are_listed_but_not_opened(demo_settings, tmp_path):
    """A sample imported without images (published ratings only) shows in Browse and refuses to open clearly."""
    from masc_ui.workbench.browse import StoredSamples
    from masc_ui.workbench.database import Database
    from storage import open_store

    with open_store(None, tmp_path / "db") as store:
        sample = store.samples.add(
            "dbpp", subject="kitten", method="m", external_key="m/live_subject_animal_00_kitten-3"
        )
        samples = StoredSamples(Database.of(store), demo_settings)
        found = samples.browse(user=None)
        assert found.rows[0][found.headers.index("prompt")] == "(ratings only: no images)"
        with pytest.raises(InputError, match="ratings-only sample.*Import its images"):
            samples.open(sample.id, user=None)


def test_saved_values_record_only_the_masks_they_were_computed_with(demo_settings, tmp_path):
    """Saving again after clearing the output mask: the new values do not claim the stored output mask."""
    from PIL import Image

    from masc_ui.metrics.sample import Sample
    from masc_ui.workbench.database import Database
    from masc_ui.workbench.recorder import Recorder
    from storage import open_store

    ref = Image.new("RGB", (32, 32), (200, 30, 30))
    out = Image.new("RGB", (32, 32), (30, 200, 30))
    mask = np.zeros((32, 32), bool)
    mask[8:24, 8:24] = True
    prov = {
        "model_id": "m",
        "revision": "local",
        "params": {},
        "code_version": "t",
        "device": "cpu",
        "dtype": "float32",
    }
    with open_store(None, tmp_path / "db") as store:
        recorder = Recorder(Database.of(store))
        with_mask = Sample(refs=(ref,), out=out, prompt="a photo", subject="cube", ref_masks=(mask,), out_mask=mask)
        first = recorder.save(
            with_mask,
            {"pf": MetricValue("pf", 0.5, provenance=prov), "cp": MetricValue("cp", 0.7, provenance=prov)},
            user="alice",
            dataset="d",
        )
        masks = store.masks.current(first.sample_id)
        (old_pf,) = store.metrics.history(first.sample_id, "pf")
        (old_cp,) = store.metrics.history(first.sample_id, "cp")
        assert old_pf.mask_version_ids == (masks["output", 0].id,)  # PF: the output mask only
        assert old_cp.mask_version_ids == (masks["reference", 0].id,)  # CP: the reference masks only
        cleared = Sample(refs=(ref,), out=out, prompt="a photo", subject="cube", ref_masks=(mask,), out_mask=None)
        recorder.save(
            cleared, {"pf": MetricValue("pf", math.nan, "no output mask", provenance=prov)}, user="alice", dataset="d"
        )
        _, new_pf = store.metrics.history(first.sample_id, "pf")
        assert new_pf.mask_version_ids == () and new_pf.reason == "no output mask"


def test_agreement_refuses_an_unbounded_bootstrap(demo_settings, tmp_path):
    from masc_ui.workbench.agreement import MAX_BOOTSTRAP, Agreement
    from masc_ui.workbench.database import Database
    from storage import open_store

    with open_store(None, tmp_path / "db") as store:
        for bad in (-1, MAX_BOOTSTRAP + 1):
            with pytest.raises(InputError, match="bootstrap resamples must be within"):
                Agreement(Database.of(store)).view(user=None, dataset=None, criterion="cp", n_boot=bad)
