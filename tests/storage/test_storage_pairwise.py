"""Pairwise tasks and judgments: assignment in one transaction, answers with history, imports, export, dump."""

from __future__ import annotations

import datetime as dt
import io
import json
import threading

import pytest
import sqlalchemy as sa

from storage import ExternalPairJudgment, InvalidInput, InvalidRating, NotFound, PairAnswer, PairChoice, migrate
from storage.repo.pair_exports import COLUMNS


@pytest.fixture()
def outputs(store, add_sample):
    """Four outputs of one reference and prompt (methods m0..m3), raters alice and bob."""
    ref = store.images.add(b"\x89PNG-not-decoded-here-ref")
    samples = [
        add_sample(references=[ref], prompt="a dog on a beach", method=f"m{i}", external_key=f"k{i}") for i in range(4)
    ]
    for name in ("alice", "bob"):
        store.ratings.ensure_rater(name)
    return samples


def first_free(state):
    """A rule for the tests: the first pair (by ids) the asking rater does not have, left = the larger id."""
    ids = [c.sample_id for c in state.candidates]
    mine = {(x.sample_a_id, x.sample_b_id) for x in state.tasks if x.rater == state.rater}
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            if (a, b) not in mine:
                return PairChoice(a, b, b)
    return None


def answers(cp="left", pf="right", **kwargs):
    return [PairAnswer("cp", cp, **kwargs), PairAnswer("pf", pf, **kwargs)]


def test_next_task_hands_back_the_open_task_until_every_criterion_is_answered(store, outputs):
    first = store.pairwise.next_task("alice", first_free)
    a, b = outputs[0].id, outputs[1].id
    assert (first.sample_a_id, first.sample_b_id, first.left_sample_id, first.right_sample_id) == (a, b, b, a)
    assert first.position == 1 and len(first.token) >= 20 and first.judgments == {}
    again = store.pairwise.next_task("alice", lambda state: pytest.fail("the open task comes first"))
    assert again.token == first.token
    store.pairwise.judge("alice", first.token, [PairAnswer("cp", "left")], seconds_spent=2.5)
    assert store.pairwise.next_task("alice", first_free).token == first.token  # pf still missing
    store.pairwise.judge("alice", first.token, [PairAnswer("pf", "tie", both_bad=True)])
    second = store.pairwise.next_task("alice", first_free)
    assert second.position == 2 and (second.sample_a_id, second.sample_b_id) == (a, outputs[2].id)
    assert store.pairwise.next_task("bob", first_free).position == 1  # positions count per rater
    done = store.pairwise.task("alice", first.token)
    assert done.complete(("cp", "pf"))
    assert {c: (j.winner, j.both_bad, j.winner_sample_id) for c, j in done.judgments.items()} == {
        "cp": ("left", False, b),
        "pf": ("tie", True, None),
    }
    assert done.judgments["cp"].seconds_spent == 2.5 and done.judgments["cp"].task_id == done.id


def test_nothing_left_and_bad_choices(store, outputs):
    assert store.pairwise.next_task("alice", lambda state: None) is None
    assert store.pairwise.tasks() == []
    a, b = outputs[0].id, outputs[1].id
    for bad in (PairChoice(a, a, a), PairChoice(a, b, outputs[2].id), PairChoice(a, 99_999, a)):
        with pytest.raises(InvalidInput, match="two different samples in scope"):
            store.pairwise.next_task("alice", lambda state, bad=bad: bad)
    task = store.pairwise.next_task("alice", lambda state: PairChoice(b, a, a))
    assert (task.sample_a_id, task.sample_b_id, task.left_sample_id) == (a, b, a)
    store.pairwise.judge("alice", task.token, answers())
    with pytest.raises(InvalidInput, match="never given the same pair twice"):
        store.pairwise.next_task("alice", lambda state: PairChoice(a, b, b))
    with pytest.raises(NotFound, match="rater 'carol' does not exist"):
        store.pairwise.next_task("carol", first_free)


def test_state_holds_the_scope(store, outputs, add_sample):
    add_sample(dataset="other", method="x")
    store.samples.add("ds", subject="dog", method="m9", external_key="ratings-only")  # no images
    no_method = add_sample(method=None)
    state = store.pairwise.state("alice", dataset="ds")
    assert [c.sample_id for c in state.candidates] == [s.id for s in outputs]  # an output image and a method
    assert no_method.id not in {c.sample_id for c in store.pairwise.state("alice").candidates}
    assert len(store.pairwise.state("alice").candidates) == 5  # every dataset
    first = state.candidates[0]
    assert (first.dataset, first.method, first.prompt, first.references, first.output_media_type) == (
        "ds",
        "m0",
        "a dog on a beach",
        outputs[0].references,
        "image/png",
    )
    video = add_sample(
        method="m9", output=store.images.add(b"\x00\x00\x00\x18ftypisom-not-decoded", media_type="video/mp4")
    )
    assert {c.sample_id: c.output_media_type for c in store.pairwise.state("alice").candidates}[video.id] == "video/mp4"
    assert state.rater == "alice" and state.now.tzinfo is not None and state.tasks == () == state.judgments


def test_changing_an_answer_keeps_history(store, outputs):
    task = store.pairwise.next_task("alice", first_free)
    first = store.pairwise.judge("alice", task.token, answers("left", "left"), seconds_spent=4.0)
    assert {c: (j.revision, j.winner) for c, j in first.items()} == {"cp": (1, "left"), "pf": (1, "left")}
    same = store.pairwise.judge("alice", task.token, answers("left", "left"), seconds_spent=9.0)
    assert same["cp"].revision == 1 and same["cp"].seconds_spent == 4.0  # the same answer is not an edit
    changed = store.pairwise.judge("alice", task.token, [PairAnswer("cp", "right")], seconds_spent=1.5)
    assert changed["cp"].revision == 2 and changed["cp"].id == first["cp"].id
    skipped = store.pairwise.judge("alice", task.token, [PairAnswer("cp", None, status="skipped", note="blurry")])
    assert (skipped["cp"].status, skipped["cp"].winner, skipped["cp"].revision) == ("skipped", None, 3)
    history = store.pairwise.history(first["cp"].id)
    assert [(h.revision, h.winner, h.status, h.seconds_spent) for h in history] == [
        (1, "left", "rated", 4.0),
        (2, "right", "rated", 1.5),
        (3, None, "skipped", 1.5),
    ]
    assert history[0].replaced_at == history[1].judged_at and history[-1].replaced_at is None
    assert history[-1].note == "blurry"
    assert [(j.criterion, j.revision) for j in store.pairwise.current(rater="alice")] == [("pf", 1), ("cp", 3)]


@pytest.mark.parametrize(
    "answer, message",
    [
        (PairAnswer("cp", "both"), "winner must be one of left, right, tie"),
        (PairAnswer("cp", None), "winner must be one of"),
        (PairAnswer("sc", "left"), "criterion 'sc' is unknown"),
        (PairAnswer("cp", "left", status="maybe"), "status 'maybe' is unknown"),
        (PairAnswer("cp", "left", status="flagged"), "has no winner"),
        (PairAnswer("cp", "left", both_bad=1), "both_bad must be True or False"),
    ],
)
def test_bad_answers_are_refused(store, outputs, answer, message):
    task = store.pairwise.next_task("alice", first_free)
    with pytest.raises((InvalidRating, InvalidInput), match=message):
        store.pairwise.judge("alice", task.token, [PairAnswer("pf", "left"), answer])
    assert store.pairwise.current() == []  # all or nothing


def test_tokens_belong_to_their_rater(store, outputs):
    task = store.pairwise.next_task("alice", first_free)
    with pytest.raises(NotFound, match="'bob' has no pairwise task"):
        store.pairwise.judge("bob", task.token, answers())
    with pytest.raises(NotFound, match="has no pairwise task"):
        store.pairwise.task("alice", "made-up-token")
    with pytest.raises(InvalidRating, match="answered twice"):
        store.pairwise.judge("alice", task.token, [PairAnswer("cp", "left"), PairAnswer("cp", "tie")])
    with pytest.raises(InvalidInput, match="seconds_spent"):
        store.pairwise.judge("alice", task.token, answers(), seconds_spent=-1)


def test_previous_task_walks_back_by_position(store, outputs, add_sample):
    tokens = []
    for _ in range(3):
        task = store.pairwise.next_task("alice", first_free)
        store.pairwise.judge("alice", task.token, answers())
        tokens.append(task.token)
    assert store.pairwise.previous_task("alice").token == tokens[2]
    assert store.pairwise.previous_task("alice", before_token=tokens[2]).token == tokens[1]
    assert store.pairwise.previous_task("alice", before_token=tokens[0]) is None
    assert store.pairwise.previous_task("bob") is None
    assert store.pairwise.previous_task("alice", dataset="ds").position == 3
    with pytest.raises(NotFound):
        store.pairwise.previous_task("bob", before_token=tokens[1])


def test_import_external_is_idempotent_whatever_the_order(store, outputs):
    a, b, c = (s.id for s in outputs[:3])
    when = dt.datetime(2026, 2, 1, 10, 15, tzinfo=dt.timezone.utc)
    rows = [
        ExternalPairJudgment(a, b, "cp", "left", judged_at=when, seconds_spent=3.0),
        ExternalPairJudgment(c, a, "pf", "tie", both_bad=True),
    ]
    assert store.pairwise.import_external("arena:rater1", rows) == 2
    assert store.pairwise.import_external("arena:rater1", rows) == 0
    swapped = [ExternalPairJudgment(b, a, "cp", "right"), ExternalPairJudgment(a, c, "pf", "tie", both_bad=True)]
    assert store.pairwise.import_external("arena:rater1", swapped) == 0  # same preferred sample: unchanged
    assert store.ratings.rater("arena:rater1").is_external
    current = {j.criterion: j for j in store.pairwise.current(rater="arena:rater1")}
    assert current["cp"].winner_sample_id == a and current["cp"].judged_at == when and current["cp"].task_id is None
    assert (current["pf"].sample_a_id, current["pf"].left_sample_id, current["pf"].winner) == (a, c, "tie")
    assert store.pairwise.import_external("arena:rater1", [ExternalPairJudgment(a, b, "cp", "right")]) == 1
    changed = store.pairwise.current(rater="arena:rater1")[-1]
    assert (changed.revision, changed.winner_sample_id) == (2, b)
    assert [h.winner for h in store.pairwise.history(changed.id)] == ["left", "right"]
    with pytest.raises(NotFound, match="sample #99999"):
        store.pairwise.import_external("arena:rater1", [ExternalPairJudgment(a, 99_999, "cp", "left")])
    with pytest.raises(InvalidInput, match="same sample"):
        store.pairwise.import_external("arena:rater1", [ExternalPairJudgment(a, a, "cp", "left")])
    with pytest.raises(InvalidInput, match="timezone-aware"):
        store.pairwise.import_external(
            "x", [ExternalPairJudgment(a, b, "cp", "left", judged_at=dt.datetime(2026, 1, 1))]
        )
    assert len(store.pairwise.current()) == 2


def test_export_one_row_per_judgment(store, outputs, add_sample):
    task = store.pairwise.next_task("alice", first_free)
    store.pairwise.judge(
        "alice",
        task.token,
        [PairAnswer("cp", "left", both_bad=True), PairAnswer("pf", None, status="flagged", note="broken")],
    )
    other = add_sample(dataset="other", method="z", external_key="o1")
    other2 = add_sample(dataset="other", method="y")
    store.pairwise.import_external("ext", [ExternalPairJudgment(other.id, other2.id, "cp", "right")])
    columns, rows = store.pairwise.export_table("ds")
    assert columns == list(COLUMNS) and len(rows) == 2
    cp = next(r for r in rows if r["criterion"] == "cp")
    left, right = task.left_sample_id, task.right_sample_id
    keys = {s.id: s.external_key for s in outputs}
    assert {
        k: cp[k]
        for k in (
            "dataset",
            "rater",
            "external",
            "left",
            "right",
            "winner",
            "winner_sample_id",
            "both_bad",
            "left_method",
            "task_position",
            "left_sample_id",
            "right_sample_id",
        )
    } == {
        "dataset": "ds",
        "rater": "alice",
        "external": False,
        "left": keys[left],
        "right": keys[right],
        "winner": "left",
        "winner_sample_id": left,
        "both_bad": True,
        "left_method": next(s.method for s in outputs if s.id == left),
        "task_position": 1,
        "left_sample_id": left,
        "right_sample_id": right,
    }
    all_rows = store.pairwise.export_table()[1]
    assert [r["dataset"] for r in all_rows] == ["ds", "ds", "other"]
    assert all_rows[2]["right"] is None and all_rows[2]["task_position"] is None
    buffer = io.StringIO()
    assert store.pairwise.write_csv(buffer, "ds") == 2
    lines = buffer.getvalue().splitlines()
    assert lines[0] == ",".join(COLUMNS) and ",flagged," in lines[2] and lines[2].count("broken") == 1
    buffer = io.StringIO()
    store.pairwise.write_jsonl(buffer)
    assert [json.loads(line)["rater"] for line in buffer.getvalue().splitlines()] == ["alice", "alice", "ext"]


def test_export_with_history_and_without_time_on_task(store, outputs):
    task = store.pairwise.next_task("alice", first_free)
    store.pairwise.judge("alice", task.token, answers("left", "tie"), seconds_spent=4.0)
    store.pairwise.judge("alice", task.token, [PairAnswer("cp", "right")], seconds_spent=1.5)  # changed once
    store.pairwise.judge("alice", task.token, [PairAnswer("cp", "tie", both_bad=True)], seconds_spent=2.0)  # twice
    left, right = task.left_sample_id, task.right_sample_id
    columns, rows = store.pairwise.export_table("ds", history=True)
    assert columns == [*COLUMNS, "current", "replaced_at"]
    cp = [r for r in rows if r["criterion"] == "cp"]
    assert [(r["revision"], r["winner"], r["seconds"], r["current"]) for r in cp] == [
        (1, "left", 4.0, False),
        (2, "right", 1.5, False),
        (3, "tie", 2.0, True),
    ]
    assert [r["winner_sample_id"] for r in cp] == [left, right, None] and cp[2]["both_bad"]
    assert cp[0]["replaced_at"] is not None and cp[2]["replaced_at"] is None
    assert all((r["left_sample_id"], r["right_sample_id"], r["task_position"]) == (left, right, 1) for r in cp)
    assert [(r["revision"], r["winner"], r["current"]) for r in rows if r["criterion"] == "pf"] == [(1, "tie", True)]
    assert [r["time"] for r in rows] == sorted(r["time"] for r in rows)  # ordered by time
    columns, rows = store.pairwise.export_table("ds", time_on_task=False)
    assert columns == [c for c in COLUMNS if c != "seconds"] and all("seconds" not in r for r in rows)
    assert [(r["criterion"], r["winner"], r["revision"]) for r in rows] == [("pf", "tie", 1), ("cp", "tie", 3)]
    buffer = io.StringIO()
    assert store.pairwise.write_csv(buffer, "ds", history=True, time_on_task=False) == 4
    header = buffer.getvalue().splitlines()[0].split(",")
    assert header[-2:] == ["current", "replaced_at"] and "seconds" not in header


def test_dump_restore_round_trips_judgments(store, outputs, make_store, tmp_path):
    task = store.pairwise.next_task("alice", first_free)
    store.pairwise.judge("alice", task.token, answers("left", "tie"))
    store.pairwise.judge("alice", task.token, [PairAnswer("cp", "right")])
    store.pairwise.import_external("ext", [ExternalPairJudgment(outputs[2].id, outputs[3].id, "pf", "left")])
    dump = tmp_path / "dump.json"
    store.dumps.dump(dump, include_blobs=True)
    tables = json.loads(dump.read_text())["tables"]
    assert [len(tables[n]["rows"]) for n in ("pair_tasks", "pair_judgments", "pair_judgment_history")] == [1, 3, 1]
    copy = make_store("copy")
    counts = copy.dumps.restore(dump)
    assert counts["pair_judgments"] == 3
    again = tmp_path / "again.json"
    copy.dumps.dump(again, include_blobs=True)
    assert json.loads(again.read_text()) == json.loads(dump.read_text())
    assert copy.pairwise.task("alice", task.token).judgments["cp"].revision == 2
    nxt = copy.pairwise.next_task("alice", first_free)  # ids and sequences continue after a restore
    assert nxt.position == 2 and nxt.id == task.id + 1


def test_downgrade_below_0005_refuses_while_judgments_exist(store, outputs):
    task = store.pairwise.next_task("alice", first_free)
    store.pairwise.judge("alice", task.token, answers())
    with pytest.raises(RuntimeError, match="cannot downgrade below revision 0005"):
        migrate.downgrade(store.engine, "0002")
    assert migrate.current_revision(store.engine) == migrate.head_revision()
    assert len(store.pairwise.current()) == 2


def test_concurrent_assignments_never_share_a_slot(store, outputs):
    """Eight raters ask at once; a rule that gives each pair to one rater only must see every earlier choice."""
    raters = [f"r{i}" for i in range(8)]
    for name in raters:
        store.ratings.ensure_rater(name)

    def once_per_pair(state):
        taken = {(x.sample_a_id, x.sample_b_id) for x in state.tasks}
        ids = [c.sample_id for c in state.candidates]
        free = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :] if (a, b) not in taken]
        return PairChoice(*free[0], free[0][0]) if free else None

    got, errors = [], []
    barrier = threading.Barrier(len(raters))

    def ask(name):
        barrier.wait()
        try:
            got.append(store.pairwise.next_task(name, once_per_pair))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(n,)) for n in raters]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    given = [(x.sample_a_id, x.sample_b_id) for x in got if x is not None]
    assert len(given) == 6 == len(set(given))  # 4 outputs: 6 pairs, each given once, two raters got none
    assert sum(x is None for x in got) == 2


def test_pair_constraints_hold_in_the_database(store, outputs):
    task = store.pairwise.next_task("alice", first_free)
    with store.engine.connect() as conn:
        for statement in (
            "UPDATE pair_tasks SET left_sample_id = 99999",
            "UPDATE pair_tasks SET sample_a_id = sample_b_id",
        ):
            with pytest.raises(sa.exc.IntegrityError), conn.begin():
                conn.execute(sa.text(statement))
    assert store.pairwise.task("alice", task.token).left_sample_id == task.left_sample_id
