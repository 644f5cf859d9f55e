"""ImagenHub rating TSVs: the real files (../shared/data/imagenhub) and bad cells."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from masc_ui.datasets.imagenhub import parse_cell, read_imagenhub
from masc_ui.errors import InputError


def test_real_files_and_notebook_means(shared_data: Path):
    ratings = read_imagenhub(shared_data / "imagenhub")
    assert ratings.problems == []
    expected = json.loads((shared_data / "imagenhub/EXPECTED_from_notebook.json").read_text())
    assert set(ratings.tasks) == {"Subject-Driven_IG", "Multi-Subject_IG", "Subject-Driven_IE"}
    for name, task in ratings.tasks.items():
        assert task.raters == ["rater1", "rater2", "rater3"]
        assert len(task.uids) == expected[name]["n_samples"]
        for model, values in expected[name].items():
            if not isinstance(values, dict) or "SC_avg" not in values:
                continue
            cells = np.array([[task.cells[r][model][u] for u in task.uids] for r in task.raters])
            assert round(float(cells[..., 0].mean()), 2) == values["SC_avg"]
            assert round(float(cells[..., 1].mean()), 2) == values["PQ_avg"]
            assert round(float(np.sqrt(cells[..., 0] * cells[..., 1]).mean()), 2) == values["O_avg"]


def test_parse_cell():
    assert parse_cell("[0.5, 1]") == (0.5, 1.0)
    assert parse_cell("[0,0]") == (0.0, 0.0)
    for bad in ("[0.3, 1]", "[1]", "0.5", "[true, 1]", "[x]"):
        with pytest.raises(ValueError):
            parse_cell(bad)


def test_bad_cells_and_rows(tmp_path: Path):
    task = tmp_path / "T"
    task.mkdir()
    (task / "T_rater1.tsv").write_text(
        "uid\tA\tB\nsample_0.jpg\t[0, 1]\t[0.5, 0.7]\nsample_1.jpg\t[1, 1]\nsample_2.jpg\t[1, 1]\t[0, 0]\n"
    )
    ratings = read_imagenhub(tmp_path)
    got = [str(p) for p in ratings.problems]
    assert got == [
        "T/T_rater1.tsv:2 column B: bad cell: value 0.7 in '[0.5, 0.7]' is not one of 0, 0.5, 1",
        "T/T_rater1.tsv:3: wrong cell count: 2 cells for 3 columns",
    ]
    cells = ratings.tasks["T"].cells["rater1"]
    assert cells["A"] == {"sample_0.jpg": (0.0, 1.0), "sample_2.jpg": (1.0, 1.0)}
    assert cells["B"] == {"sample_2.jpg": (0.0, 0.0)}


def test_folder_errors(tmp_path: Path):
    with pytest.raises(InputError, match="not found"):
        read_imagenhub(tmp_path / "nope")
    with pytest.raises(InputError, match="no <task>/<task>_rater<N>.tsv files"):
        read_imagenhub(tmp_path)
