"""A skip never overwrites what a rater gave (issue 11): a revisited task keeps its answer, or its flag and the flag's
reason; a skip of an unanswered task is stored."""

from __future__ import annotations

import pytest

from masc_ui.workbench import Workbench, build_workbench
from masc_ui.workbench.examples import load_example


@pytest.fixture()
def rated(demo_settings):
    """A workbench with two stored samples (no logins: any name rates) and the rater `zoe`."""
    wb = build_workbench(demo_settings)
    ex = load_example("cat-on-grass")
    ids = [
        wb.recorder.save(
            wb.scoring.make_sample([ex.ref], ex.out, f"prompt {i}", "cat"), {}, user=None, dataset="d"
        ).sample_id
        for i in range(2)
    ]
    wb.database.store.ratings.ensure_rater("zoe")
    yield wb, ids
    wb.close()


def _current(wb: Workbench, sample_id: int) -> set[tuple]:
    return {
        (r.criterion, r.status, r.score, r.note, r.revision)
        for r in wb.database.store.ratings.current(rater="zoe", sample_id=sample_id)
    }


def test_a_skip_keeps_a_flag_and_its_reason(rated):
    wb, (flagged, _) = rated
    wb.ratings.submit("zoe", flagged, {}, status="flagged", reason="the output is blank")
    before = _current(wb, flagged)
    kept = wb.ratings.submit("zoe", flagged, {"cp": None, "pf": None}, status="skipped")
    assert (kept.stored, kept.status) == (False, "flagged")
    assert kept.message == "kept your flag (reason: “the output is blank”): a skip never erases an answer or a flag"
    assert _current(wb, flagged) == before and {s for _, s, *_ in before} == {"flagged"}
    assert wb.ratings.task_for("zoe", flagged).reason == "the output is blank"


def test_a_skip_keeps_an_answer_and_stores_a_new_skip(rated):
    wb, (answered, fresh) = rated
    wb.ratings.submit("zoe", answered, {"cp": 3, "pf": 1})
    before = _current(wb, answered)
    kept = wb.ratings.submit("zoe", answered, {}, status="skipped")
    assert (kept.stored, kept.status) == (False, "rated") and "kept your answer (CP 3, PF 1)" in kept.message
    assert _current(wb, answered) == before
    skipped = wb.ratings.submit("zoe", fresh, {}, status="skipped")
    assert (skipped.stored, skipped.status) == (True, "skipped")
    assert {s for _, s, *_ in _current(wb, fresh)} == {"skipped"}
    again = wb.ratings.submit("zoe", fresh, {}, status="skipped")  # a skip over a skip is nothing to keep
    assert again.stored
