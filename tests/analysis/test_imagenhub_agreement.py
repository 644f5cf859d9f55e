"""ImagenHub: reproduce AnalyzeHumanEval.ipynb's means, ordinal alphas and Fleiss kappas from the real
ratings (EXPECTED_from_notebook.json, 2 decimals), plus the summary on a small hand-made task."""

import json
import math
from dataclasses import dataclass, field

import krippendorff
import numpy as np
import pytest
from imagenhub_expected import FIELDS, NOTEBOOK_KAPPAS  # noqa: E402

from masc_ui.analysis import HUMANS, agreement_table
from masc_ui.analysis.imagenhub import agreement_data, rating_tables, summarize_model, summarize_task
from masc_ui.errors import InputError


@pytest.fixture(scope="module")
def imagenhub(shared_data):
    from masc_ui.datasets.imagenhub import read_imagenhub

    root = shared_data / "imagenhub"
    if not (root / "human_ratings").is_dir():
        pytest.skip(f"ImagenHub ratings not found under {root}")
    ratings = read_imagenhub(root)
    assert ratings.problems == []
    expected = json.loads((root / "EXPECTED_from_notebook.json").read_text())
    return ratings, expected


def expected_items(expected):
    for task, models in expected.items():
        if isinstance(models, dict):
            for model, values in models.items():
                if isinstance(values, dict):
                    yield task, model, values


def test_means_alphas_and_kappas_match_the_notebook(imagenhub):
    ratings, expected = imagenhub
    checked = 0
    for task, model, values in expected_items(expected):
        summary = summarize_model(ratings.tasks[task], model)
        assert summary["sc"].n_samples == expected[task]["n_samples"]
        for key, want in values.items():
            criterion, attr = FIELDS[key]
            got = getattr(summary[criterion], attr)
            assert round(got, 2) == pytest.approx(want, abs=1e-9), f"{task} {model} {key}: {got:.4f} vs {want}"
            checked += 1
    assert checked == 50  # every number the JSON lists


def test_kappas_printed_by_the_notebook(imagenhub):
    ratings, _ = imagenhub
    for (task, model), kappas in NOTEBOOK_KAPPAS.items():
        summary = summarize_model(ratings.tasks[task], model)
        got = tuple(round(summary[c].fleiss_kappa, 2) for c in ("sc", "pq", "o"))
        assert got == pytest.approx(kappas, abs=1e-9), f"{task} {model}"


def test_agreement_table_human_rows_give_the_same_ordinal_alphas(imagenhub):
    ratings, expected = imagenhub
    task = ratings.tasks["Subject-Driven_IG"]
    data = agreement_data(task)
    assert data.rating_range == (0.0, 1.0) and data.raters("sc") == ["rater1", "rater2", "rater3"]
    table = agreement_table(data, [], "sc", by="method", n_boot=0, human_level="ordinal")
    for model, values in expected["Subject-Driven_IG"].items():
        if isinstance(values, dict):
            row = table.row(HUMANS, model)
            assert row.n == 150 and row.n_raters == 3
            assert round(row.alpha.value, 2) == pytest.approx(values["SC_kripp_alpha_ordinal"], abs=1e-9)


@dataclass
class FakeTask:
    name: str = "Toy_IG"
    raters: list = field(default_factory=lambda: ["rater1", "rater2", "rater3"])
    models: list = field(default_factory=lambda: ["A"])
    uids: list = field(default_factory=lambda: ["s0", "s1", "s2", "s3"])
    cells: dict = field(default_factory=dict)


def toy_task():
    t = FakeTask()
    sc = [[1, 0.5, 0, 1], [1, 0.5, 0.5, 1], [1, 0, 0, 0.5]]
    pq = [[1, 1, 0.5, 0.5], [1, 0.5, 0.5, 1], [1, 1, 0, 1]]
    t.cells = {r: {"A": {u: (sc[i][j], pq[i][j]) for j, u in enumerate(t.uids)}} for i, r in enumerate(t.raters)}
    del t.cells["rater3"]["A"]["s3"]  # one missing cell
    return t, np.array(sc, float), np.array(pq, float)


def test_summary_on_a_hand_made_task():
    task, sc, pq = toy_task()
    sc[2, 3] = pq[2, 3] = np.nan
    tables = rating_tables(task, "A")
    np.testing.assert_array_equal(tables["sc"], sc)
    np.testing.assert_allclose(tables["o"], np.sqrt(sc * pq))
    s = summarize_model(task, "A")
    assert s["sc"].mean == pytest.approx(np.mean([np.nanmean(r) for r in sc]))
    assert s["o"].mean == pytest.approx(np.mean([np.nanmean(r) for r in np.sqrt(sc * pq)]))
    assert s["pq"].alpha_ordinal == pytest.approx(krippendorff.alpha(pq, level_of_measurement="ordinal"))
    assert s["sc"].n_samples == 4 and s["sc"].n_raters == 3
    assert not math.isnan(s["sc"].fleiss_kappa)  # on the three samples every rater rated
    assert set(summarize_task(task)) == {"A"}
    data = agreement_data(task)
    assert len(data.records) == 4 and data.records[3].ratings["sc"] == {"rater1": 1.0, "rater2": 1.0}
    assert data.records[0].sample_id == "Toy_IG/A/s0" and data.records[0].method == "A"


def test_unknown_model_is_refused():
    task, _, _ = toy_task()
    with pytest.raises(InputError, match="no model 'B'"):
        rating_tables(task, "B")
