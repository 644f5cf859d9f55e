"""Gold tasks (use cases, SQLite and PostgreSQL): marked by an admin with an accepted score or range, mixed into each
rater's queue at the gold rate, handed out like any other task, each rater's accuracy kept per criterion, and never
counted as ratings of a method."""

from __future__ import annotations

import dataclasses

import pytest
from gold_samples import save_samples

from masc_ui.datasets.accepted import parse_accepted
from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench import build_workbench
from masc_ui.workbench.users import AccessDenied, Account, Accounts


@pytest.fixture()
def bench(demo_settings: Settings, database_url: str | None, tmp_path):
    def make(gold_rate: float = 0.25, **more):
        wb = build_workbench(demo_settings.replace(database_url=database_url, gold_rate=gold_rate, **more))
        made.append(wb)
        return wb

    made: list = []
    yield make
    for wb in made:
        wb.close()


def _raters(wb, *names: str) -> None:
    for name in names:
        wb.database.store.ratings.ensure_rater(name)


def _walk(wb, rater: str, dataset: str = "d", score: int = 3) -> list[int]:
    """The sample ids `rater` is handed, in order, answering each with `score` on both criteria."""
    seen = []
    while (task := wb.ratings.next_task(rater, dataset=dataset)) is not None:
        seen.append(task.sample_id)
        wb.ratings.submit(rater, task.sample_id, {"cp": score, "pf": score}, seconds_spent=5.0)
        assert len(seen) < 100
    return seen


def test_gold_tasks_are_mixed_in_at_the_rate_once_each(bench, tmp_path):
    wb = bench(gold_rate=0.25, rating_overlap=2)
    ids = save_samples(wb, tmp_path / "img", 12)
    gold = ids[:3]
    for sid in gold:
        wb.gold.mark(user=None, dataset="d", sample=f"#{sid}", criterion="cp", accepted="3-4")
    orders = {}
    for rater in ("zoe", "yan"):
        seen = orders[rater] = _walk(wb, rater)
        assert sorted(seen) == ids  # every normal sample (K = 2) and every gold task, once
        # one gold task in every block of 4 (round(1 / 0.25)), at a drawn place: never two in one block
        assert [sum(1 for s in seen[i : i + 4] if s in gold) for i in range(0, 12, 4)] == [1, 1, 1], seen
    places = {rater: [i % 4 for i, s in enumerate(seen) if s in gold] for rater, seen in orders.items()}
    assert places["zoe"] != places["yan"]  # drawn per rater: no fixed position gives a gold task away
    # the normal samples have their K = 2 ratings: a third rater gets the gold tasks, and nothing else
    assert sorted(_walk(wb, "xia")) == gold
    assert wb.gold.mark(user=None, dataset="d", sample=f"#{ids[5]}", criterion="cp", accepted="0").kind == "gold"
    assert _walk(wb, "xia") == [ids[5]]  # a sample marked later reaches everyone who has not answered it


def test_gold_rate_zero_hands_out_no_gold_task(bench, tmp_path):
    wb = bench(gold_rate=0.0)
    ids = save_samples(wb, tmp_path / "img", 4)
    wb.gold.mark(user=None, dataset="d", sample=f"#{ids[0]}", criterion="pf", accepted="0")
    seen = _walk(wb, "zoe")
    assert sorted(seen) == ids[1:]
    assert wb.ratings.progress("zoe", dataset="d").total == 3


def test_a_gold_task_is_shown_exactly_as_a_normal_one(bench, tmp_path):
    """Everything of the view but the images, their files and the opaque token is the same (same prompt here)."""
    wb = bench(gold_rate=0.5)
    ids = save_samples(wb, tmp_path / "img", 4)
    wb.gold.mark(user=None, dataset="d", sample=f"#{ids[1]}", criterion="cp", accepted="4", note="the same cat")
    views, replies, progress = {}, {}, []
    while (task := wb.ratings.next_task("zoe", dataset="d")) is not None:
        progress.append(wb.ratings.progress("zoe", dataset="d"))
        views[task.sample_id] = task
        replies[task.sample_id] = wb.ratings.submit("zoe", task.sample_id, {"cp": 2, "pf": 2}, seconds_spent=4.0)

    def shown(view):
        return {
            k: v
            for k, v in dataclasses.asdict(view).items()
            if k not in ("sample_id", "refs", "out", "refs_picture", "token", "presentation_order")
        }

    gold, normal = views[ids[1]], views[ids[0]]
    assert shown(gold) == shown(normal)
    assert [p.name for p in gold.refs] == [p.name for p in normal.refs]  # the same reference file
    assert gold.out.suffix == normal.out.suffix and len(gold.out.name) == len(normal.out.name)
    assert dataclasses.replace(replies[ids[1]], sample_id=0) == dataclasses.replace(replies[ids[0]], sample_id=0)
    assert [(p.assigned, p.total) for p in progress] == [(4, 4)] * 4  # gold counted like any task
    assert [p.rated for p in progress] == [0, 1, 2, 3]


def test_accuracy_is_kept_per_rater_kind_and_criterion(bench, tmp_path):
    wb = bench(gold_rate=0.5)
    ids = save_samples(wb, tmp_path / "img", 4)
    wb.gold.mark(user=None, dataset="d", sample=f"#{ids[0]}", criterion="cp", accepted="3-4")
    wb.gold.mark(user=None, dataset="d", sample=f"#{ids[0]}", criterion="pf", accepted="0-1")
    _raters(wb, "zoe", "yan")
    wb.gold.mark(user=None, dataset="d", sample=f"#{ids[1]}", criterion="cp", accepted="2")
    wb.ratings.submit("zoe", ids[0], {"cp": 4, "pf": 4})
    wb.ratings.submit("zoe", ids[1], {"cp": 2, "pf": 0})
    wb.ratings.submit("yan", ids[0], {}, status="skipped")  # a skip is not an answer to grade
    wb.ratings.submit("yan", ids[1], {"cp": 0, "pf": 0})
    found = {(a.rater, a.kind, a.criterion): (a.correct, a.n) for a in wb.gold.accuracy(user=None, dataset="d")}
    assert found == {
        ("zoe", "gold", "cp"): (2, 2),
        ("zoe", "gold", "pf"): (0, 1),
        ("yan", "gold", "cp"): (0, 1),
    }
    wb.gold.mark(user=None, dataset="d", sample=f"#{ids[1]}", criterion="cp", accepted="0-2")  # replaced
    found = {(a.rater, a.criterion): (a.correct, a.n) for a in wb.gold.accuracy(user=None, dataset="d")}
    assert found[("yan", "cp")] == (1, 1)
    assert wb.gold.unmark(user=None, dataset="d", sample=f"#{ids[1]}") == 1
    assert [(a.sample_id, a.criterion) for a in wb.gold.answers(user=None, dataset="d")] == [
        (ids[0], "cp"),
        (ids[0], "pf"),
    ]


def test_gold_answers_never_count_as_ratings_of_a_method(bench, tmp_path):
    wb = bench(gold_rate=0.5)
    ids = save_samples(wb, tmp_path / "img", 4)
    _raters(wb, "zoe", "yan")
    for sid, score in zip(ids, (4, 4, 0, 0), strict=True):  # m1: ids 0, 2; m2: ids 1, 3
        for rater in ("zoe", "yan"):
            wb.ratings.submit(rater, sid, {"cp": score, "pf": score})
    before = wb.leaderboard.view(user=None, dataset="d", n_boot=0, pairwise=False)
    means = {r.group: r.humans["cp"].mean.value for r in before.board.rows}
    assert means == {"m1": 2.0, "m2": 2.0}
    wb.gold.mark(user=None, dataset="d", sample=f"#{ids[0]}", criterion="cp", accepted="4")
    after = wb.leaderboard.view(user=None, dataset="d", n_boot=0, pairwise=False)
    assert {r.group: r.humans["cp"].mean.value for r in after.board.rows} == {"m1": 0.0, "m2": 2.0}
    data = wb.agreement.data(user=None, dataset="d")
    assert len(data.records) == 3 and all(not r.sample_id.endswith(f"#{ids[0]}") for r in data.records)


@pytest.mark.parametrize(("text", "expected"), [("3", (3, 3)), ("3-4", (3, 4)), (" 0..1 ", (0, 1)), ("2–2", (2, 2))])
def test_accepted_answers_are_read(text, expected):
    assert parse_accepted(text) == expected


@pytest.mark.parametrize(
    ("text", "said"),
    [("5", "write one score 0-4"), ("4-3", "the range is empty"), ("good", "write one score 0-4"), ("", "0-4")],
)
def test_bad_accepted_answers_are_refused(text, said):
    with pytest.raises(InputError, match=said):
        parse_accepted(text)


def test_marking_is_checked_and_admin_only(bench, tmp_path):
    wb = bench()
    ids = save_samples(wb, tmp_path / "img", 2)
    with pytest.raises(InputError, match="has no sample with key 'nope'"):
        wb.gold.mark(user=None, dataset="d", sample="nope", criterion="cp", accepted="3")
    with pytest.raises(InputError, match="dataset 'other' is not in the database"):
        wb.gold.mark(user=None, dataset="other", sample=f"#{ids[0]}", criterion="cp", accepted="3")
    with pytest.raises(InputError, match="criterion must be one of cp, pf"):
        wb.gold.mark(user=None, dataset="d", sample=f"#{ids[0]}", criterion="sc", accepted="3")
    accounts = Accounts({"ann": Account("ann", "-", "admin"), "rae": Account("rae", "-", "rater")})
    guarded = build_workbench(wb.settings, store=wb.database.store, accounts=accounts)
    with pytest.raises(AccessDenied):
        guarded.gold.mark(user="rae", dataset="d", sample=f"#{ids[0]}", criterion="cp", accepted="3")
    assert guarded.gold.mark(user="ann", dataset="d", sample=f"#{ids[0]}", criterion="cp", accepted="3").low == 3


def test_the_manifest_imports_gold_answers(bench, tmp_path):
    import json

    from gold_samples import outputs

    from masc_ui.workbench.examples import EXAMPLES_DIR

    wb = bench()
    outs = outputs(tmp_path / "img", 3)
    rows = [
        {"ref": str(EXAMPLES_DIR / "cat-on-grass" / "ref.jpg"), "out": str(o), "prompt": "a cat", "subject": "cat"}
        | {"key": f"k{i}", "method": "m1"}
        for i, o in enumerate(outs)
    ]
    rows[0] |= {"gold_cp": "3-4"}
    rows[1] |= {"gold_cp": "0", "gold_pf": "1..2"}
    rows[2] |= {"gold_pf": "7"}  # refused: the row is skipped and said
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    name, parsed = wb.imports.read("manifest", manifest, dataset="g")
    assert [p.reason for p in parsed.problems] == [
        "gold_pf: accepted answer '7': write one score 0-4 (e.g. 3) or a range low-high (e.g. 3-4)"
    ]
    (summary,) = wb.imports.ingest(parsed, user=None, dataset=name, fmt="manifest")
    assert summary.gold_answers == 3 and any("3 accepted answer(s) of gold tasks" in x for x in summary.lines())
    found = {(a.criterion, a.low, a.high, a.kind) for a in wb.gold.answers(user=None, dataset="g")}
    assert found == {("cp", 3, 4, "gold"), ("cp", 0, 0, "gold"), ("pf", 1, 2, "gold")}
