"""Agreement data loaded from storage: metric values, judge scales, current ratings."""

from __future__ import annotations

from pathlib import Path

import pytest
from dataset_trees import write_dreambench

from masc_ui.analysis import RATING_0_4
from masc_ui.datasets import read_layout
from masc_ui.datasets.agreement_source import load_agreement_data
from masc_ui.errors import InputError
from masc_ui.workbench.ingest import ingest
from storage import open_store


def test_records_scales_and_ratings(tmp_path: Path):
    with open_store(None, tmp_path / "data") as store:
        ingest(store, "dbpp", "dreambench", read_layout("dreambench", write_dreambench(tmp_path / "t"), judge="gpt"))
        sample = store.samples.get_by_key("dbpp", "dreambooth_sd/object_03_red_backpack-2")
        store.metrics.record(sample.id, "clip_i", 0.5, provenance={"model_id": "m", "code_version": "c"})
        store.ratings.ensure_rater("alice")
        store.ratings.rate("alice", sample.id, "cp", None, status="skipped")
        data = load_agreement_data(store, "dbpp")
        from masc_ui.workbench.agreement import Agreement
        from masc_ui.workbench.database import Database

        with pytest.raises(InputError, match="dataset 'nope' is not in the database; known datasets: dbpp"):
            Agreement(Database.of(store)).data(user=None, dataset="nope")
    assert len(data.records) == 12
    assert data.scales == {"gpt_cp": RATING_0_4, "gpt_pf": RATING_0_4}  # clip_i stays continuous
    rec = {r.sample_id: r for r in data.records}["dbpp/dreambooth_sd/object_03_red_backpack-2"]
    assert rec.method == "dreambooth_sd" and rec.category == "object"
    assert rec.metrics == {"gpt_cp": 3.0, "gpt_pf": 3.0, "clip_i": 0.5}
    assert rec.ratings == {
        "cp": {"dreambench:group1": 3.0, "dreambench:group2": 4.0},
        "pf": {"dreambench:group1": 3.0, "dreambench:group2": 4.0},
    }  # alice skipped
    assert data.raters("cp") == ["dreambench:group1", "dreambench:group2"]
