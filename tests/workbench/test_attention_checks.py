"""Attention checks made from the data (use cases, SQLite and PostgreSQL): per subject, its reference as the output
(accepted CP 4) and an output of another subject (accepted CP 0-1), stored as gold tasks of kind `attention` with
the subject's references and prompt, made once, handed to raters like any task, graded apart from gold, and never
counted as ratings of a method."""

from __future__ import annotations

import pytest
from gold_samples import outputs

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench import build_workbench
from masc_ui.workbench.examples import EXAMPLES_DIR

SUBJECTS = {"cat": "cat-on-grass", "coffee": "coffee-on-bricks"}


@pytest.fixture()
def wb(demo_settings: Settings, database_url: str | None, tmp_path):
    bench = build_workbench(demo_settings.replace(database_url=database_url, gold_rate=0.5))
    for subject, example in SUBJECTS.items():
        for i, out in enumerate(outputs(tmp_path / subject, 2, example)):
            sample = bench.scoring.make_sample([EXAMPLES_DIR / example / "ref.jpg"], out, f"the {subject} {i}", subject)
            bench.recorder.save(sample, {}, user=None, dataset="d", method=f"m{i}")
    bench.samples.set_for_rating("d", True, user=None)
    yield bench
    bench.close()


def test_checks_are_made_from_the_data_once(wb):
    made = wb.gold.make_attention_checks(user=None, dataset="d")
    assert (made.added, made.existing, made.subjects) == (4, 0, 2)
    assert "4 made, 0 already there" in made.text()
    checks = {a.sample_id: a for a in wb.gold.answers(user=None, dataset="d", kind="attention")}
    samples = {s.id: s for s in wb.database.store.samples.list("d")}
    by_key = {samples[sid].external_key: (samples[sid], a) for sid, a in checks.items()}
    assert set(by_key) == {
        "attention:reference-as-output:cat",
        "attention:other-subject:cat",
        "attention:reference-as-output:coffee",
        "attention:other-subject:coffee",
    }
    normal = {s.subject: s for s in sorted(samples.values(), key=lambda s: -s.id) if s.id not in checks}
    same, same_gold = by_key["attention:reference-as-output:cat"]
    assert same.output == same.references[0] == normal["cat"].references[0] and same.prompt == "the cat 0"
    assert (same_gold.criterion, same_gold.low, same_gold.high, same_gold.kind) == ("cp", 4, 4, "attention")
    other, other_gold = by_key["attention:other-subject:cat"]
    assert other.references == normal["cat"].references and other.subject == "cat"
    coffee_outputs = {s.output for s in samples.values() if s.subject == "coffee" and s.id not in checks}
    assert other.output in coffee_outputs and (other_gold.low, other_gold.high) == (0, 1)
    assert same.method is None and other.method is None
    again = wb.gold.make_attention_checks(user=None, dataset="d")
    assert (again.added, again.existing) == (0, 4)
    assert len(wb.database.store.samples.list("d")) == 8


def test_checks_are_handed_out_graded_apart_and_never_a_methods_rating(wb):
    wb.gold.make_attention_checks(user=None, dataset="d")
    wb.gold.mark(user=None, dataset="d", sample="#1", criterion="cp", accepted="3-4")
    checks = wb.gold.answers(user=None, dataset="d", kind="attention")
    gold = {a.sample_id for a in wb.gold.answers(user=None, dataset="d")}
    accepted = {a.sample_id: a for a in checks}
    seen = []
    while (task := wb.ratings.next_task("zoe", dataset="d")) is not None:
        seen.append(task.sample_id)
        check = accepted.get(task.sample_id)
        cp = 4 if check is None or check.low == 4 else 3  # passes the reference-as-output checks, fails the others
        wb.ratings.submit("zoe", task.sample_id, {"cp": cp, "pf": 2})
    assert sorted(seen) == sorted({s.id for s in wb.database.store.samples.list("d")})
    found = {(a.kind, a.criterion): (a.correct, a.n) for a in wb.gold.accuracy(user=None, dataset="d")}
    assert found == {("attention", "cp"): (2, 4), ("gold", "cp"): (1, 1)}
    data = wb.agreement.data(user=None, dataset="d")
    assert len(data.records) == 3  # the four normal samples, less the gold one: no check, no gold
    assert all(r.method in ("m0", "m1") for r in data.records)
    assert not gold & {int(r.sample_id.rsplit("#", 1)[1]) for r in data.records}


def test_a_dataset_without_image_samples_has_no_checks(wb):
    wb.database.store.samples.add("ratings-only", subject="s", external_key="k1")
    with pytest.raises(InputError, match="no image sample with references and a prompt"):
        wb.gold.make_attention_checks(user=None, dataset="ratings-only")
