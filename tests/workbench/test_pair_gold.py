"""Gold pairs and pair attention checks (use cases, SQLite and PostgreSQL): marked by an admin (a, b or tie), mixed
into each rater's pair queue at the gold rate and never handed out as a normal pair, indistinguishable from a normal
pair through the API, each rater's accuracy kept per criterion, and never counted for a method."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import pytest
from pairwise_samples import add_outputs, decoded, shown

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench.database import Database
from masc_ui.workbench.pair_gold import PairGoldTasks
from masc_ui.workbench.pairwise import PairwiseTasks, plan_of
from masc_ui.workbench.pairwise_analysis import PairwiseAnalysis
from storage import ExternalPairJudgment, open_store


@pytest.fixture()
def store(database_url, tmp_path: Path):
    with open_store(database_url, tmp_path / "data") as opened:
        yield opened


def tasks_of(store, gold_rate: float = 0.25, overlap: int = 2, policy: str = "overlap") -> PairwiseTasks:
    return PairwiseTasks(
        Database.of(store), Settings(rating_overlap=overlap, gold_rate=gold_rate, assignment_policy=policy)
    )


def _key(record) -> tuple[int, int]:
    return (record.sample_a_id, record.sample_b_id)


def _walk(store, tasks: PairwiseTasks, rater: str, answer: str = "left") -> list[tuple[int, int]]:
    """The pairs `rater` is handed, in order, answering `answer` on both criteria."""
    seen = []
    while (view := tasks.next_task(rater)) is not None:
        seen.append(_key(store.pairwise.task(rater, view.token)))
        tasks.submit(rater, view.token, {"cp": answer, "pf": answer})
        assert len(seen) < 100
    return seen


def _mark_three(store, samples) -> list[tuple[int, int]]:
    """Mark three pairs of different references as gold (the first two outputs of each), accepting `a` on cp."""
    gold = PairGoldTasks(Database.of(store))
    keys = []
    for r in range(3):
        first, second = (s for s in samples if s.external_key.startswith(f"r{r}/") and s.method in ("m0", "m1"))
        gold.mark(
            user=None, dataset="ds", first=first.external_key, second=f"#{second.id}", criterion="cp", accepted="a"
        )
        keys.append((first.id, second.id))
    return keys


@pytest.mark.parametrize("policy", ["overlap", "active"])
def test_gold_pairs_are_mixed_in_at_the_rate_once_each_and_never_as_normal_pairs(store, policy):
    samples = add_outputs(store, methods=("m0", "m1", "m2"), references=4)  # 4 x 3 = 12 pairs
    gold = _mark_three(store, samples)
    tasks = tasks_of(store, gold_rate=0.25, overlap=2, policy=policy)
    plan = plan_of(store.pairwise.state("zoe", for_rating_only=True))
    assert len(plan.pairs) == 9 and not {(int(p.a), int(p.b)) for p in plan.pairs} & set(gold)
    orders = {}
    for rater in ("zoe", "yan", "xi"):
        orders[rater] = _walk(store, tasks, rater)
    for rater in ("zoe", "yan"):
        seen = orders[rater]
        assert len(seen) == 12 and sorted(Counter(seen).values()) == [1] * 12  # 9 normal + 3 gold, each once
        # one gold pair in every block of 4 (round(1 / 0.25)), at a drawn place
        assert [sum(1 for k in seen[i : i + 4] if k in gold) for i in range(0, 12, 4)] == [1, 1, 1], seen
    assert sorted(orders["xi"]) == sorted(gold)  # K = 2 normal pairs are full: only the gold pairs are left for xi
    places = {r: [i % 4 for i, k in enumerate(orders[r]) if k in gold] for r in ("zoe", "yan")}
    assert places["zoe"] != places["yan"]  # drawn per rater
    per_pair = Counter(_key(t) for t in store.pairwise.tasks())
    assert all(per_pair[k] == 3 for k in gold)  # every rater once: a gold pair takes no normal slot, holds none
    assert all(n == 2 for k, n in per_pair.items() if k not in gold)
    progress = tasks.progress("zoe")
    assert (progress.judged, progress.assigned, progress.total) == (12, 12, 12)


def test_with_gold_rate_zero_gold_pairs_are_not_handed_out(store):
    samples = add_outputs(store, methods=("m0", "m1", "m2"), references=4)
    gold = _mark_three(store, samples)
    seen = _walk(store, tasks_of(store, gold_rate=0.0), "zoe")
    assert len(seen) == 9 and not set(seen) & set(gold)
    assert tasks_of(store, gold_rate=0.0).progress("zoe").total == 9


def test_a_gold_pair_reaches_a_rater_exactly_like_a_normal_pair(store):
    samples = add_outputs(store, methods=("m0", "m1", "m2"), references=4)
    gold = set(_mark_three(store, samples))
    tasks = tasks_of(store, gold_rate=0.5)
    views = {}
    while (view := tasks.next_task("zoe")) is not None and len(views) < 2:
        record = store.pairwise.task("zoe", view.token)
        views.setdefault(_key(record) in gold, (view, record))
        tasks.submit("zoe", view.token, {"cp": "tie", "pf": "tie"})
    (gold_view, gold_record), (normal_view, normal_record) = views[True], views[False]
    # the stored task: the same fields, the same kind of token
    assert [f.name for f in dataclasses.fields(gold_record)] == [f.name for f in dataclasses.fields(normal_record)]
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", gold_view.token) and re.fullmatch(r"[A-Za-z0-9_-]{22}", normal_view.token)

    def shape(view) -> dict:
        """The view with each file replaced by what its name looks like (a keyed hash of the same form) and the
        token, position and answers blanked: what remains must be byte for byte the same for both pairs."""
        out = {}
        for name, value in dataclasses.asdict(view).items():
            if isinstance(value, Path):
                value = (re.sub(r"[0-9a-f]", "x", value.name), value.parent == tasks.file_folder)
            elif isinstance(value, list):
                value = [(re.sub(r"[0-9a-f]", "x", p.name), p.parent == tasks.file_folder) for p in value]
            elif name in ("token", "position", "answers", "answered_as"):
                value = None
            out[name] = value
        return out

    assert shape(gold_view) == shape(normal_view)
    assert gold_view.prompt == normal_view.prompt  # one prompt in this dataset: nothing differs in the text either
    left = store.samples.get(gold_record.left_sample_id)
    assert (decoded(store.images.read(left.output)) == shown(gold_view.left)).all()  # the images are the pair's own


def test_gold_accuracy_is_kept_per_rater_and_criterion_whatever_the_sides(store):
    samples = add_outputs(store, methods=("m0", "m1", "m2"), references=4)
    gold = _mark_three(store, samples)
    gold_uc = PairGoldTasks(Database.of(store))
    a, b = gold[0]
    gold_uc.mark(user=None, dataset="ds", first=f"#{b}", second=f"#{a}", criterion="pf", accepted="tie")
    tasks = tasks_of(store, gold_rate=0.5)
    expected = {"cp": [0, 0], "pf": [0, 0]}
    while (view := tasks.next_task("zoe")) is not None:
        record = store.pairwise.task("zoe", view.token)
        key = _key(record)
        if key in gold:
            # prefer the smaller sample id (accepted `a` on cp) on the first gold pair, the other side elsewhere
            better = key[0] if key == gold[0] else key[1]
            side = "left" if record.left_sample_id == better else "right"
            expected["cp"][0] += key == gold[0]
            expected["cp"][1] += 1
            if key == gold[0]:
                expected["pf"][1] += 1  # answered `side`, accepted tie: not correct
            tasks.submit("zoe", view.token, {"cp": side, "pf": side})
        else:
            tasks.submit("zoe", view.token, {"cp": "tie", "pf": "tie"})
    found = {(g.kind, g.criterion): (g.correct, g.n) for g in gold_uc.accuracy(user=None, dataset="ds")}
    assert found == {("gold", "cp"): (1, 3), ("gold", "pf"): (0, 1)}
    assert expected == {"cp": [1, 3], "pf": [0, 1]}


def test_gold_and_attention_pairs_never_count_for_a_method(store):
    samples = add_outputs(store, methods=("m0", "m1"), references=3)
    gold = _mark_three(store, samples)
    gold_uc = PairGoldTasks(Database.of(store))
    made = gold_uc.make_attention_checks(user=None, dataset="ds")
    assert (made.added, made.existing) == (3, 0)  # one per subject
    again = gold_uc.make_attention_checks(user=None, dataset="ds")
    assert (again.added, again.existing) == (0, 3)
    checks = gold_uc.answers(user=None, dataset="ds", kind="attention")
    assert len(checks) == 6 and {g.accepted for g in checks} == {"tie"}  # both criteria of 3 checks
    for g in checks:
        original, copy = store.samples.get(g.sample_a_id), store.samples.get(g.sample_b_id)
        assert copy.method is None and copy.external_key == f"attention:same-output:{original.id}"
        assert copy.output == original.output and copy.references == original.references
    tasks = tasks_of(store, gold_rate=0.5, overlap=1)
    seen = _walk(store, tasks, "zoe", answer="left")
    assert len(seen) == 6 and set(gold) | {g.key for g in checks} == set(seen)  # 3 gold pairs, 3 checks, no other
    # every judgment is of a gold pair or a check: the analysis has none to count
    with pytest.raises(InputError, match="no pairwise judgments yet"):
        PairwiseAnalysis(Database.of(store)).input(user=None, dataset="ds")
    accuracy = {(g.kind, g.criterion): (g.correct, g.n) for g in gold_uc.accuracy(user=None, dataset="ds")}
    assert accuracy[("attention", "cp")] == (0, 3) and accuracy[("attention", "pf")] == (0, 3)


def test_normal_judgments_still_count_next_to_gold_ones(store):
    samples = add_outputs(store, methods=("m0", "m1", "m2"), references=2)
    gold_uc = PairGoldTasks(Database.of(store))
    first, second = samples[0], samples[1]
    gold_uc.mark(user=None, dataset="ds", first=f"#{first.id}", second=f"#{second.id}", criterion="cp", accepted="b")
    tasks = tasks_of(store, gold_rate=0.5, overlap=1)
    seen = _walk(store, tasks, "zoe")
    assert len(seen) == 6
    data = PairwiseAnalysis(Database.of(store)).input(user=None, dataset="ds").data
    assert len(data.judgments) == 2 * 5  # both criteria of the 5 normal pairs, none of the gold one


def test_bad_gold_pairs_are_refused_with_the_reason(store):
    samples = add_outputs(store, methods=("m0", "m1"), references=1)
    gold_uc = PairGoldTasks(Database.of(store))
    a, b = (s.external_key for s in samples)
    for kwargs, message in (
        (dict(first=a, second=a, criterion="cp", accepted="a"), "the same sample"),
        (dict(first=a, second=b, criterion="sc", accepted="a"), "criterion must be one of cp, pf"),
        (dict(first=a, second=b, criterion="cp", accepted="left"), r"is a \(the first sample is better\), b"),
        (dict(first=a, second="nope", criterion="cp", accepted="a"), "has no sample with key 'nope'"),
    ):
        with pytest.raises(InputError, match=message):
            gold_uc.mark(user=None, dataset="ds", **kwargs)
    with pytest.raises(InputError, match="dataset 'other' is not in the database"):
        gold_uc.make_attention_checks(user=None, dataset="other")


@pytest.fixture()
def bench(demo_settings: Settings, database_url: str | None):
    from masc_ui.workbench import build_workbench

    wb = build_workbench(demo_settings.replace(database_url=database_url, gold_rate=0.5, rating_overlap=1))
    yield wb
    wb.close()


def test_the_rater_report_grades_pair_gold_per_criterion_and_pair_attention(bench):
    from masc_ui.workbench.rater_report import report_rows

    store = bench.database.store
    samples = add_outputs(store, methods=("m0", "m1", "m2"), references=2)
    first, second = samples[0], samples[1]
    for criterion in ("cp", "pf"):
        bench.pair_gold.mark(
            user=None, dataset="ds", first=f"#{first.id}", second=f"#{second.id}", criterion=criterion, accepted="a"
        )
    bench.pair_gold.make_attention_checks(user=None, dataset="ds")  # 2 subjects: 2 checks
    while (view := bench.pairwise.next_task("zoe")) is not None:
        record = store.pairwise.task("zoe", view.token)
        left_is_first = record.left_sample_id == first.id
        # on the gold pair: cp right (the first sample), pf wrong; everywhere else (checks included) a tie
        if {record.sample_a_id, record.sample_b_id} == {first.id, second.id}:
            winners = {"cp": "left" if left_is_first else "right", "pf": "right" if left_is_first else "left"}
        else:
            winners = {"cp": "tie", "pf": "tie"}
        bench.pairwise.submit("zoe", view.token, winners)
    report = bench.rater_report.report(user=None, dataset="ds", n_boot=0)
    (zoe,) = report.rows
    assert {c: (g.correct, g.n) for c, g in zoe.pair_gold.items()} == {"cp": (1, 1), "pf": (0, 1)}
    assert (zoe.pair_attention.correct, zoe.pair_attention.n) == (4, 4)  # 2 checks x 2 criteria, all ties
    headers, rows = report_rows(report)
    assert rows[0][headers.index("pair gold")] == "cp 1/1; pf 0/1"
    assert rows[0][headers.index("pair attention")] == "4/4"
    assert report.to_dict()["raters"][0]["pair_gold"] == {"cp": {"correct": 1, "n": 1}, "pf": {"correct": 0, "n": 1}}


def test_a_pair_attention_checks_copy_is_never_a_single_sample_task(store):
    samples = add_outputs(store, methods=("m0", "m1"), references=1)
    PairGoldTasks(Database.of(store)).make_attention_checks(user=None, dataset="ds")
    (check,) = {g.sample_b_id for g in store.pair_gold.answers(kind="attention")}
    store.ratings.ensure_rater("zoe")
    seen = []
    while (task := store.tasks.next_task("zoe", "ds", overlap_k=1)) is not None:
        seen.append(task.sample.id)
        store.ratings.rate_sample("zoe", task.sample.id, {"cp": 3, "pf": 3})
    assert sorted(seen) == sorted(s.id for s in samples) and check not in seen
    assert store.tasks.progress("zoe", "ds", overlap_k=1).total == 2


def test_the_active_policy_weighs_no_judgment_of_a_gold_pair(store):
    from masc_ui.workbench.pairwise import _judgments

    samples = add_outputs(store, methods=("m0", "m1", "m2"), references=1)
    a, b, c = (s.id for s in samples)
    store.pair_gold.mark(a, b, "cp", "a")
    store.pairwise.import_external(
        "group", [ExternalPairJudgment(a, b, "cp", "left"), ExternalPairJudgment(a, c, "cp", "left")]
    )
    state = store.pairwise.state("zoe", dataset="ds")
    assert state.gold == {(a, b)}
    assert [(j.left, j.right) for j in _judgments(state)] == [(str(a), str(c))]
