"""The one composition root (issue 27): `build_workbench` decides the profile once and every use case runs on it; the
`Workbench` is a container of use cases (no pass-through methods); Save scores once and hands back the report it
recorded; the database's repositories are typed and translate storage errors."""

from __future__ import annotations

import inspect

import pytest

from masc_ui.errors import InputError
from masc_ui.models import auto_profile
from masc_ui.settings import Settings
from masc_ui.workbench import Workbench, build_workbench
from masc_ui.workbench.database import StoreError
from masc_ui.workbench.examples import load_example
from masc_ui.workbench.scoring import Scoring
from masc_ui.workbench.workbench import UnresolvedProfile


def test_the_workbench_holds_use_cases_and_no_pass_through():
    own = {name for name, _ in inspect.getmembers(Workbench, inspect.isfunction) if not name.startswith("_")}
    assert own == {"status", "close"}


def test_auto_is_resolved_once_and_every_use_case_runs_on_the_result(tmp_path, monkeypatch):
    """Offline with nothing cached: `auto` becomes demo at once, the demo checkpoints are written on the fresh data
    folder, and the scoring, segmentation and batch use cases (the catalogue and video models read the same
    settings) get the demo profile, so no loader asks the Hub for a paper checkpoint."""
    monkeypatch.setattr(auto_profile, "cached_config", lambda model_id: None)
    wb = build_workbench(Settings(profile="auto", data_dir=tmp_path / "data", device="cpu"))
    try:
        assert (wb.profile.name, wb.profile.requested) == ("demo", "auto") and "HF_HUB_OFFLINE" in wb.profile.why
        assert wb.settings.profile == "demo"
        assert {wb.scoring.settings.profile, wb.segmentation.settings.profile, wb.batch._settings.profile} == {"demo"}
        weights = tmp_path / "data" / "demo-weights"
        assert (weights / "sam-vit-tiny" / "sam_vit_tiny.pth").is_file() and (weights / "sam3").is_dir()
        assert wb.status().notice is not None and wb.status().line().startswith("profile: demo (asked: auto)")
    finally:
        wb.close()


def test_a_workbench_that_loads_no_model_resolves_nothing_and_refuses_model_use_cases(tmp_path, monkeypatch):
    def probe(*args: object) -> None:
        raise AssertionError("the profile was resolved")

    monkeypatch.setattr(auto_profile, "resolve_auto_profile", probe)
    wb = build_workbench(Settings(profile="auto", data_dir=tmp_path / "data"), resolve=False)
    try:
        assert wb.samples.datasets(user=None) == [] and not (tmp_path / "data" / "demo-weights").exists()
        with pytest.raises(UnresolvedProfile):
            wb.scoring  # noqa: B018 - building it is what is refused
    finally:
        wb.close()


def test_use_cases_are_built_once_and_shared(demo_settings):
    wb = build_workbench(demo_settings)
    try:
        assert wb.scoring is wb.scoring and wb.compare._scoring is wb.scoring and wb.saving._scoring is wb.scoring
        assert wb.leaderboard._agreement is wb.agreement and wb.recorder is wb.batch._recorder
    finally:
        wb.close()


def test_save_scores_once_and_hands_back_the_report_it_recorded(demo_settings, monkeypatch):
    wb = build_workbench(demo_settings)
    calls: list[tuple[str, ...]] = []
    real = Scoring.score

    def counted(self: Scoring, sample, names=None, **kwargs):
        calls.append(tuple(names or ()))
        return real(self, sample, names, **kwargs)

    monkeypatch.setattr(Scoring, "score", counted)
    try:
        ex = load_example("cat-on-grass")
        sample = wb.scoring.make_sample([ex.ref], ex.out, ex.prompt, ex.subject, [ex.ref_mask], ex.out_mask)
        saved = wb.saving.save(sample, user=None, dataset=" counts ", names=["cp", "pf", "clip_i"])
        assert calls == [("cp", "pf", "clip_i")]  # scored once: the table shows `saved.report`
        assert saved.report is not None and [r.metric for r in saved.report.rows] == ["cp", "pf", "clip_i"]
        stored = wb.samples.latest_values(saved.sample_id, user=None)
        assert {m: stored[m].value for m in ("cp", "pf", "clip_i")} == pytest.approx(
            {m: saved.report.values[m].value for m in ("cp", "pf", "clip_i")}
        )
        assert wb.samples.datasets(user=None)[0].name == "counts"
        with pytest.raises(InputError, match="dataset name is empty"):
            wb.saving.save(sample, user=None, dataset="  ")
        assert len(calls) == 1  # refused before scoring
    finally:
        wb.close()


def test_the_repositories_are_typed_calls_with_storage_errors_translated(demo_settings):
    wb = build_workbench(demo_settings)
    try:
        assert wb.database.samples.datasets() == []
        with pytest.raises(StoreError, match="sample #99 does not exist"):
            wb.database.samples.get(99)
        with pytest.raises(InputError, match="sample #99 is gone"):
            wb.database.sample(99, missing="is gone")
    finally:
        wb.close()
