"""ImagenHub human ratings imported into the database (`masc-ui import imagenhub`), then every number of
AnalyzeHumanEval.ipynb that EXPECTED_from_notebook.json lists reproduced FROM THE DATABASE (2 decimals),
through the path `masc-ui agreement` uses (`load_agreement_data` -> `agreement_table`); SQLite and PostgreSQL."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from imagenhub_expected import FIELDS, NOTEBOOK_KAPPAS  # noqa: E402

from masc_ui.analysis import HUMANS, agreement_table
from masc_ui.analysis.imagenhub import summarize_data, with_overall
from masc_ui.cli import main
from masc_ui.datasets import read_layout
from masc_ui.datasets.agreement_source import load_agreement_data
from masc_ui.workbench.ingest import ingest_all
from storage import open_store


@pytest.fixture()
def imagenhub_root(shared_data: Path) -> Path:
    root = shared_data / "imagenhub"
    if not (root / "human_ratings").is_dir():
        pytest.skip(f"ImagenHub ratings not found under {root}")
    return root


def _expected(root: Path):
    expected = json.loads((root / "EXPECTED_from_notebook.json").read_text())
    for task, models in expected.items():
        if isinstance(models, dict):
            for model, values in models.items():
                if isinstance(values, dict):
                    yield task, model, values, models["n_samples"]


def test_import_then_reproduce_the_notebook_from_the_database(imagenhub_root, database_url, tmp_path):
    parsed = read_layout("imagenhub", imagenhub_root)
    with open_store(database_url, tmp_path / "data") as store:
        first = ingest_all(store, "imagenhub", "imagenhub", parsed)
        assert [s.dataset for s in first] == [
            "imagenhub-Multi-Subject_IG",
            "imagenhub-Subject-Driven_IE",
            "imagenhub-Subject-Driven_IG",
        ]
        assert all(s.problems == [] and s.added_samples == s.ratings_only_samples for s in first)
        assert sum(s.added_samples for s in first) == 306 + 462 + 750
        assert sum(s.added_ratings for s in first) == 2 * 3 * (306 + 462 + 750)
        again = ingest_all(store, "imagenhub", "imagenhub", read_layout("imagenhub", imagenhub_root))
        assert [(s.added_samples, s.added_ratings) for s in again] == [(0, 0)] * 3
        assert [s.existing_ratings for s in again] == [s.added_ratings for s in first]
        sample = store.samples.get_by_key("imagenhub-Subject-Driven_IG", "SuTI/sample_0.jpg")
        assert sample.ratings_only and sample.method == "SuTI" and sample.category == "Subject-Driven_IG"
        assert sample.subject == "sample_0.jpg" and sample.prompt is None
        # sample_0.jpg, SuTI: "[1,0.5]" by rater1 -> stored x 4
        rated = {(r.rater, r.criterion): r.score for r in store.ratings.current(sample_id=sample.id)}
        assert rated[("imagenhub:rater1", "sc")] == 4 and rated[("imagenhub:rater1", "pq")] == 2
        assert all(r.is_external for r in store.ratings.raters())
        assert store.tasks.next_task(store.ratings.ensure_rater("alice").username) is None  # nothing to show
        data = {
            task: load_agreement_data(store, f"imagenhub-{task}")
            for task in ("Subject-Driven_IG", "Multi-Subject_IG", "Subject-Driven_IE")
        }

    checked = 0
    for task, model, values, n_samples in _expected(imagenhub_root):
        summary = summarize_data(with_overall(data[task]))[model]
        assert summary["sc"].n_samples == n_samples and summary["sc"].n_raters == 3
        for key, want in values.items():
            criterion, attr = FIELDS[key]
            got = getattr(summary[criterion], attr)
            assert round(got, 2) == pytest.approx(want, abs=1e-9), f"{task} {model} {key}: {got:.4f} vs {want}"
            checked += 1
    assert checked == 50  # every number the JSON lists
    for (task, model), kappas in NOTEBOOK_KAPPAS.items():
        summary = summarize_data(with_overall(data[task]))[model]
        assert tuple(round(summary[c].fleiss_kappa, 2) for c in ("sc", "pq", "o")) == pytest.approx(kappas, abs=1e-9)

    # the human-vs-human rows of `masc-ui agreement --criterion sc|pq --by method --human-level ordinal`
    for task, model, values, n_samples in _expected(imagenhub_root):
        for criterion in ("sc", "pq"):
            key = f"{criterion.upper()}_kripp_alpha_ordinal"
            if key in values:
                table = agreement_table(data[task], [], criterion, by="method", n_boot=0, human_level="ordinal")
                row = table.row(HUMANS, model)
                assert row.n == n_samples and row.n_raters == 3
                assert round(row.alpha.value, 2) == pytest.approx(values[key], abs=1e-9), f"{task} {model} {key}"


def test_cli_import_and_agreement(imagenhub_root, tmp_path, capsys):
    args = ["--data-dir", str(tmp_path / "data")]
    assert main(["import", "imagenhub", str(imagenhub_root), *args]) == 0
    out = capsys.readouterr().out
    assert "dataset 'imagenhub-Subject-Driven_IG' (imagenhub): samples 750 imported" in out
    assert "750 of the imported samples are ratings-only" in out
    assert main(["import", "imagenhub", str(imagenhub_root), "--dataset", "imagenhub", *args]) == 0
    assert (
        "samples 0 imported, 750 already present; ratings 0 imported, 4500 already present" in capsys.readouterr().out
    )
    assert (
        main(
            [
                "agreement",
                "--dataset",
                "imagenhub-Subject-Driven_IG",
                "--criterion",
                "sc",
                "--by",
                "method",
                "--human-level",
                "ordinal",
                "--n-boot",
                "0",
                "--json",
                *args,
            ]
        )
        == 0
    )
    rows = {(r["metric"], r["group"]): r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert round(rows[("humans", "DreamBooth")]["alpha"]["value"], 2) == 0.64
    assert rows[("humans", "all")]["n"] == 750


def _tsv(path: Path, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(["uid\tA\tB", *rows]) + "\n")


def test_bad_cells_are_reported_by_file_and_line_and_skipped(tmp_path):
    root = tmp_path / "human_ratings"
    _tsv(root / "Toy_IG/Toy_IG_rater1.tsv", ["s0\t[1, 0.5]\t[0, 1]", "s1\t[0.7, 1]\t[1, 1]", "s2\t[1, 1]"])
    _tsv(root / "Toy_IG/Toy_IG_rater2.tsv", ["s0\t[1, 1]\t[0.5, 0]", "s1\t[0, 0]\tnope", "s2\t[0, 0]\t[0, 0]"])
    parsed = read_layout("imagenhub", tmp_path)
    problems = [str(p) for p in parsed.problems]
    assert problems == [
        "Toy_IG/Toy_IG_rater1.tsv:3 column A: bad cell: value 0.7 in '[0.7, 1]' is not one of 0, 0.5, 1",
        "Toy_IG/Toy_IG_rater1.tsv:4: wrong cell count: 2 cells for 3 columns",
        "Toy_IG/Toy_IG_rater2.tsv:3 column B: bad cell: not a [SC, PQ] pair: 'nope'",
    ]
    with open_store(None, tmp_path / "data") as store:
        summaries = ingest_all(store, "ih", "imagenhub", parsed)
        assert [s.dataset for s in summaries] == ["ih-*", "ih-Toy_IG"]
        assert summaries[0].skipped == 3 and "skipped, by reason" in "\n".join(summaries[0].lines())
        toy = summaries[1]
        assert (toy.added_samples, toy.added_ratings) == (6, 2 * 8)
        by_key = {s.external_key: s for s in store.samples.list("ih-Toy_IG")}
        assert sorted(by_key) == ["A/s0", "A/s1", "A/s2", "B/s0", "B/s1", "B/s2"]
        scores = {(r.rater, r.criterion): r.score for r in store.ratings.current(sample_id=by_key["A/s0"].id)}
        assert scores == {
            ("imagenhub:rater1", "sc"): 4,
            ("imagenhub:rater1", "pq"): 2,
            ("imagenhub:rater2", "sc"): 4,
            ("imagenhub:rater2", "pq"): 4,
        }
        assert [r.rater for r in store.ratings.current(sample_id=by_key["A/s1"].id)] == ["imagenhub:rater2"] * 2
        data = with_overall(load_agreement_data(store, "ih-Toy_IG"))
    rec = {r.sample_id: r for r in data.records}["ih-Toy_IG/A/s0"]
    assert rec.ratings["o"]["imagenhub:rater1"] == pytest.approx(math.sqrt(4 * 2))
    assert summarize_data(data)["A"]["sc"].mean == pytest.approx(((1 + 1) / 2 + (1 + 0 + 0) / 3) / 2)


def test_cli_import_format_and_dataset_are_checked(tmp_path, capsys):
    _tsv(tmp_path / "human_ratings/Toy_IG/Toy_IG_rater1.tsv", ["s0\t[1, 0.5]\t[0, 1]"])
    args = ["--data-dir", str(tmp_path / "data")]
    assert main(["import", "imagenhub", str(tmp_path), "--format", "dreambench", *args]) == 2
    assert "format given twice and differently ('imagenhub' and --format 'dreambench')" in capsys.readouterr().err
    assert main(["import", str(tmp_path), *args]) == 2
    assert "name the format" in capsys.readouterr().err
    assert main(["import", str(tmp_path), "--format", "dreambench", *args]) == 2
    assert "import format 'dreambench' needs --dataset NAME" in capsys.readouterr().err
    assert main(["import", str(tmp_path), "--format", "imagenhub", "--dataset", "ih", *args]) == 0
    assert "dataset 'ih-Toy_IG' (imagenhub): samples 2 imported" in capsys.readouterr().out
    assert main(["agreement", "--dataset", "ih-Toy_IG", "--criterion", "pq", "--n-boot", "0", *args]) == 0
    assert "humans" in capsys.readouterr().out
