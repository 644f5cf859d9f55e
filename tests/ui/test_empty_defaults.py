"""What a page shows before anything is picked: no sample id 0, no numbered headers, no active Submit for nobody."""

from __future__ import annotations

from pathlib import Path

import pytest

from masc_ui.errors import InputError
from masc_ui.workbench.browse import sample_id_of


def _components(tmp_path: Path, demo_weights: Path, users: str | None) -> dict[str, dict]:
    from masc_ui.settings import Settings
    from masc_ui.ui.blocks import build_app
    from masc_ui.workbench import build_workbench

    settings = Settings(
        profile="demo", demo_weights_dir=demo_weights, device="cpu", dtype="float32", data_dir=tmp_path, users=users
    )
    wb = build_workbench(settings)
    try:
        app = build_app(wb)
        return {c["props"].get("elem_id"): c["props"] for c in app.config["components"] if c["props"].get("elem_id")}
    finally:
        wb.close()


def test_without_logins_the_rate_tab_offers_no_answer_button(tmp_path, demo_weights):
    shown = _components(tmp_path / "none", demo_weights, None)
    for button in ("rate-submit", "rate-skip", "rate-flag", "rate-back"):
        assert shown[button]["interactive"] is False, button
    with_logins = _components(tmp_path / "some", demo_weights, "ann:pw-ann-1:admin,rob:pw-rob-1:rater")
    assert with_logins["rate-submit"].get("interactive") is not False


def test_sample_ids_start_empty_and_compare_names_its_columns(tmp_path, demo_weights):
    shown = _components(tmp_path, demo_weights, None)
    for box in ("browse-sample-id", "cmp-sample-id"):
        assert shown[box]["value"] == "" and shown[box]["placeholder"] == "pick a sample first", shown[box]
    assert shown["cmp-table"]["value"]["headers"] == ["metric", "left", "right", "left - right", "better"]


def test_an_empty_sample_id_says_pick_a_sample_first():
    for empty in (None, "", "  "):
        with pytest.raises(InputError, match="pick a sample first"):
            sample_id_of(empty)
    assert sample_id_of(" 12 ") == 12
