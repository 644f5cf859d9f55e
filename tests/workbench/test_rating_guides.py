"""Rating guides and practice rounds (use cases, SQLite and PostgreSQL): an admin sets a dataset's guide (versions
kept), its examples and its practice round; a rater is shown the guide before their first task of the dataset and
again after it changes, then the practice round with feedback after each answer, then real tasks; practice answers
never become ratings and practice samples are never real tasks; the guide's Markdown fetches nothing."""

from __future__ import annotations

import pytest
from gold_samples import PROMPT, save_samples

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench import build_workbench
from masc_ui.workbench.practice import feedback_line
from masc_ui.workbench.rating_guide import parse_example, render_markdown
from masc_ui.workbench.users import AccessDenied, Account, Accounts

GUIDE = "# How to rate\n\nLook at the **subject** first."


@pytest.fixture()
def bench(demo_settings: Settings, database_url: str | None):
    made: list = []

    def make(gold_rate: float = 0.0, **more):
        wb = build_workbench(demo_settings.replace(database_url=database_url, gold_rate=gold_rate, **more))
        made.append(wb)
        return wb

    yield make
    for wb in made:
        wb.close()


def _gold(wb, ids, note="the subject's colour changed"):
    for sid in ids:
        wb.gold.mark(user=None, dataset="d", sample=f"#{sid}", criterion="cp", accepted="3-4", note=note)
        wb.gold.mark(user=None, dataset="d", sample=f"#{sid}", criterion="pf", accepted="2")


def test_admin_sets_the_guide_with_examples_and_practice_and_versions_are_kept(bench, tmp_path):
    wb = bench()
    ids = save_samples(wb, tmp_path / "img", 6)
    _gold(wb, ids[:2])
    first = wb.guides.set_guide(user=None, dataset="d", text=GUIDE, examples=[f"#{ids[3]}:4:-:same dog"])
    assert (first.guide.version, first.versions, first.guide.practice_tasks) == (1, 1, 0)
    summary = wb.guides.set_guide(
        user=None,
        dataset="d",
        text="second text",
        examples=[f"#{ids[4]}:1:3:colour: wrong", f"#{ids[5]}:-:0"],
        practice_tasks=2,
        practice_samples=[f"#{ids[0]}", f"#{ids[1]}"],
        practice_skippable=True,
    )
    assert (summary.guide.version, summary.versions, summary.guide.text) == (2, 2, "second text")
    assert [(e.sample_id, e.cp, e.pf, e.note) for _, e in summary.examples] == [
        (ids[4], 1, 3, "colour: wrong"),
        (ids[5], None, 0, None),
    ]
    assert summary.practice == [f"#{ids[0]}", f"#{ids[1]}"]
    assert [g.text for g in wb.database.guides.versions("d")] == [GUIDE, "second text"]
    # a later edit of the text alone keeps the examples, the practice list and its settings
    third = wb.guides.set_guide(user=None, dataset="d", text="third")
    assert (third.guide.practice_tasks, third.guide.practice_skippable, len(third.examples)) == (2, True, 2)
    assert "version 3 of 3" in third.text() and f"#{ids[4]}:1:3:colour: wrong" in third.text()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "  "}, "the guide is empty"),
        ({"examples": ["#{0}:5:-"]}, "CP must be a score 0-4 or -"),
        ({"examples": ["#{0}:-:-"]}, "give an expected score for CP, PF or both"),
        ({"examples": ["nonsense"]}, "write SAMPLE:CP:PF:NOTE"),
        ({"examples": ["nokey:3:3"]}, "has no sample with key 'nokey'"),
        ({"practice_samples": ["#{0}"], "practice_tasks": 1}, "is not a gold task"),
        ({"practice_tasks": 1}, "asks for 1 task(s) but 0 practice sample(s) are picked"),
        ({"practice_tasks": 99}, "whole number 0-50"),
        ({"examples": ["#{0}:3:3"] * 7}, "at most 6 examples"),
    ],
)
def test_bad_guide_input_is_refused_with_a_clear_error_and_nothing_is_stored(bench, tmp_path, kwargs, message):
    wb = bench()
    ids = save_samples(wb, tmp_path / "img", 2)
    args = {
        "text": GUIDE,
        **{k: [x.format(ids[0]) for x in v] if isinstance(v, list) else v for k, v in kwargs.items()},
    }
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        wb.guides.set_guide(user=None, dataset="d", **args)
    assert wb.database.guides.versions("d") == []


def test_only_admins_set_a_guide(bench, tmp_path):
    wb = bench()
    save_samples(wb, tmp_path / "img", 2)
    accounts = Accounts({"ann": Account("ann", "-", "admin"), "rae": Account("rae", "-", "rater")})
    guarded = build_workbench(wb.settings, store=wb.database.store, accounts=accounts)
    with pytest.raises(AccessDenied):
        guarded.guides.set_guide(user="rae", dataset="d", text=GUIDE)
    with pytest.raises(AccessDenied):
        guarded.guides.summary(user="rae", dataset="d")
    assert guarded.guides.set_guide(user="ann", dataset="d", text=GUIDE).guide.created_by == "ann"
    with pytest.raises(AccessDenied):
        guarded.guides.next_step("mallory")  # not a login


def test_a_rater_reads_the_guide_practises_with_feedback_then_rates(bench, tmp_path):
    wb = bench(gold_rate=0.25)
    ids = save_samples(wb, tmp_path / "img", 8)
    practice, examples = ids[:2], ids[2:3]
    _gold(wb, practice)
    assert wb.guides.next_step("zoe").kind == "tasks"  # no guide: straight to the tasks
    wb.guides.set_guide(
        user=None,
        dataset="d",
        text=GUIDE,
        examples=[f"#{examples[0]}:3:4:the dog's ears differ"],
        practice_tasks=2,
        practice_samples=[f"#{s}" for s in practice],
    )
    step = wb.guides.next_step("zoe")
    assert step.kind == "guide" and step.dataset == "d"
    assert "<h1>How to rate</h1>" in step.guide.html and "<strong>subject</strong>" in step.guide.html
    (example,) = step.guide.examples
    assert example.prompt == PROMPT and example.expected == {"cp": 3, "pf": 4}
    assert example.out.is_file() and example.out.parent == wb.ratings.image_folder  # a blind file
    assert len(example.out.stem) == 64 and example.refs_picture.parent == wb.ratings.image_folder
    assert example.answers()[0].startswith("Concept preservation: 3 — the same subject with small differences")
    wb.guides.mark_read("zoe", "d", step.guide.version)
    assert wb.guides.next_step("zoe").kind == "practice"

    first = wb.practice.next_task("zoe", "d")
    assert (first.number, first.of, first.skippable) == (1, 2, False) and first.sample_id in practice
    with pytest.raises(InputError, match="choose a score"):
        wb.practice.answer("zoe", "d", first.sample_id, {"cp": 3, "pf": None})
    feedback = wb.practice.answer("zoe", "d", first.sample_id, {"cp": 1, "pf": 2})
    assert feedback.lines == [
        "✗ Concept preservation: you answered 1; the expected answer was 3-4: the subject's colour changed",
        "✓ Prompt following: you answered 2; the expected answer was 2",
    ]
    assert (feedback.correct, feedback.left) == (1, 1) and "1 practice task(s) to go" in feedback.text()
    with pytest.raises(InputError, match="no longer yours"):  # each practice task is answered once
        wb.practice.answer("zoe", "d", first.sample_id, {"cp": 3, "pf": 2})
    second = wb.practice.next_task("zoe", "d")
    assert second.number == 2 and second.sample_id != first.sample_id
    assert wb.practice.answer("zoe", "d", second.sample_id, {"cp": 4, "pf": 2}).left == 0
    assert wb.practice.next_task("zoe", "d") is None
    assert wb.guides.next_step("zoe").kind == "tasks"
    with pytest.raises(InputError, match="cannot be skipped"):
        wb.practice.skip("zoe", "d")

    # practice answers are kept apart: no rating, no gold accuracy, no rater report; practice samples are never
    # real tasks
    assert wb.database.ratings.current(rater="zoe") == []
    assert wb.gold.accuracy(user=None, dataset="d") == []
    with pytest.raises(InputError, match="no rater"):
        wb.rater_report.report(user=None, dataset="d", n_boot=0)
    assert len(wb.database.guides.practice_answers("zoe", "d")) == 4
    seen = []
    while (task := wb.ratings.next_task("zoe")) is not None:
        seen.append(task.sample_id)
        wb.ratings.submit("zoe", task.sample_id, {"cp": 3, "pf": 3})
    assert sorted(seen) == ids[2:]
    assert wb.ratings.progress("zoe").total == 6
    (row,) = wb.rater_report.report(user=None, dataset="d", n_boot=0).rows
    assert (row.rater, row.answers) == ("zoe", 6)  # the real tasks only

    # a new version of the guide is shown again before the next task; a finished practice round stays done
    wb.guides.set_guide(user=None, dataset="d", text="# Changed")
    assert wb.guides.next_step("yan").kind == "guide"
    assert wb.guides.next_step("zoe").kind == "tasks"  # zoe has no task left: nothing to show before one


def test_a_new_guide_version_is_shown_again_and_a_skippable_round_can_be_skipped(bench, tmp_path):
    wb = bench()
    ids = save_samples(wb, tmp_path / "img", 4)
    _gold(wb, ids[:1])
    wb.guides.set_guide(user=None, dataset="d", text=GUIDE, practice_tasks=1, practice_samples=[f"#{ids[0]}"])
    wb.guides.mark_read("zoe", "d", 1)
    assert wb.guides.next_step("zoe").kind == "practice"
    wb.guides.set_guide(user=None, dataset="d", text="v2", practice_skippable=True)
    step = wb.guides.next_step("zoe")
    assert step.kind == "guide" and step.guide.version == 2 and step.guide.practice_skippable
    wb.guides.mark_read("zoe", "d", 2)
    wb.practice.skip("zoe", "d")
    assert wb.guides.next_step("zoe").kind == "tasks"
    assert wb.database.guides.practice_answers("zoe") == []
    assert wb.guides.guide_for_task("zoe", ids[2]).html == "<p>v2</p>\n"  # the guide on demand


def test_the_guides_markdown_shows_no_raw_html_no_images_and_no_script_links():
    html = render_markdown(
        "<img src='http://evil.example/x.png'> ![logo](http://evil.example/logo.png)\n\n"
        "[ok](https://example.org) [bad](javascript:alert(1))\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    )
    assert "<img" not in html and "&lt;img src='http://evil.example/x.png'&gt;" in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")
    assert '<a target="_blank" rel="noopener noreferrer nofollow" href="https://example.org">ok</a>' in html
    assert "<table>" in html


def test_examples_and_feedback_text():
    assert parse_example("dog-3:3:-:colour: changed") == ("dog-3", 3, None, "colour: changed")
    assert parse_example("#7:-:0") == ("#7", None, 0, None)
    assert feedback_line("cp", 4, 3, 4, None) == "✓ Concept preservation: you answered 4; the expected answer was 3-4"


def test_the_step_before_a_task_follows_the_tasks_dataset(bench, tmp_path):
    """A rater's queue may hold several datasets: the guide due is the one of the task's dataset."""
    wb = bench()
    plain = save_samples(wb, tmp_path / "a", 2, dataset="plain")
    guided = save_samples(wb, tmp_path / "b", 2, dataset="d")
    wb.guides.set_guide(user=None, dataset="d", text=GUIDE)
    assert wb.guides.step_before("zoe", plain[0]).kind == "tasks"
    step = wb.guides.step_before("zoe", guided[0])
    assert (step.kind, step.dataset, step.guide.version) == ("guide", "d", 1)
    wb.guides.mark_read("zoe", "d", 1)
    assert wb.guides.step_before("zoe", guided[1]).kind == "tasks"
    assert wb.database.guides.pending("zoe", guided[1]) is None
    assert wb.database.guides.pending("nobody-yet", guided[1]) == ("d", "guide")
