"""Gold pairs in storage (SQLite and PostgreSQL): marked canonically with the accepted answer turned with the order,
refused when they cannot be shown, carried by dump and restore, and the schema revision of pair gold answers: a
downgrade below it refuses while pair gold answers exist and changes nothing."""

from __future__ import annotations

import pytest
from alembic.script import ScriptDirectory

from storage import InvalidInput, PairChoice, migrate


def _revision(title: str) -> str:
    """The revision whose migration has this title (numbers change when branches merge)."""
    found = [
        r.revision for r in ScriptDirectory.from_config(migrate.alembic_config()).walk_revisions() if r.doc == title
    ]
    assert len(found) == 1, found
    return found[0]


def test_a_pair_is_stored_canonically_and_its_answer_turns_with_the_order(store, add_sample):
    a, b = add_sample(method="m0"), add_sample(method="m1")
    record = store.pair_gold.mark(b.id, a.id, "cp", "a", note="the second one is blurred")
    assert (record.sample_a_id, record.sample_b_id, record.accepted) == (a.id, b.id, "b")  # b (given first) wins
    again = store.pair_gold.mark(a.id, b.id, "cp", "tie")  # marking again replaces the answer
    assert again.accepted == "tie" and again.note is None and again.kind == "gold"
    store.pair_gold.mark(a.id, b.id, "pf", "a")
    assert [(g.criterion, g.accepted) for g in store.pair_gold.answers("ds")] == [("cp", "tie"), ("pf", "a")]
    assert store.pair_gold.keys() == {(a.id, b.id)}
    assert store.pair_gold.unmark(b.id, a.id, "cp") == 1
    assert [g.criterion for g in store.pair_gold.answers()] == ["pf"]


def test_pairs_that_cannot_be_gold_are_refused(store, add_sample):
    a, b = add_sample(method="m0"), add_sample(method="m1")
    other = add_sample(dataset="other", method="m1")
    ratings_only = store.samples.add("ds", subject="dog", external_key="r-only")
    for args, message in (
        ((a.id, a.id, "cp", "a"), "two different samples"),
        ((a.id, b.id, "sc", "a"), "criterion must be one of cp, pf"),
        ((a.id, b.id, "cp", "left"), "must be one of a, b, tie"),
        ((a.id, other.id, "cp", "a"), "in different datasets"),
        ((a.id, ratings_only.id, "cp", "a"), f"sample #{ratings_only.id} has no output image"),
    ):
        with pytest.raises(InvalidInput, match=message):
            store.pair_gold.mark(*args)
    assert store.pair_gold.answers() == []


def test_a_rule_may_not_choose_a_gold_pair(store, add_sample):
    a, b = add_sample(method="m0"), add_sample(method="m1")
    store.pair_gold.mark(a.id, b.id, "cp", "a")
    store.ratings.ensure_rater("alice")
    with pytest.raises(InvalidInput, match="a gold pair; gold pairs are handed out by their own rule"):
        store.pairwise.next_task("alice", lambda state: PairChoice(a.id, b.id, a.id))
    assert store.pairwise.tasks() == []


def test_dump_and_restore_carry_pair_gold_answers(store, add_sample, make_store):
    a, b = add_sample(method="m0"), add_sample(method="m1")
    store.pair_gold.mark(a.id, b.id, "cp", "b", note="why")
    dump = store.dumps.dump_dict(include_blobs=True)
    assert len(dump["tables"]["pair_gold_answers"]["rows"]) == 1
    target = make_store("restored")
    assert target.dumps.restore(dump)["pair_gold_answers"] == 1
    assert target.pair_gold.answers() == store.pair_gold.answers()


def test_downgrade_below_pair_gold_answers_refuses_while_pair_gold_answers_exist(store, add_sample):
    a, b = add_sample(method="m0"), add_sample(method="m1")
    store.pair_gold.mark(a.id, b.id, "cp", "a")
    ours = _revision("pair gold answers")
    below = ScriptDirectory.from_config(migrate.alembic_config()).get_revision(ours).down_revision
    migrate.downgrade(store.engine, ours)  # whatever came after this revision
    with pytest.raises(RuntimeError, match="the database holds 1 pair gold answers"):
        migrate.downgrade(store.engine, below)
    assert migrate.current_revision(store.engine) == ours
    assert len(store.pair_gold.answers()) == 1
    store.pair_gold.unmark(a.id, b.id)
    migrate.downgrade(store.engine, below)
    assert migrate.current_revision(store.engine) == below
    migrate.upgrade(store.engine)
    assert migrate.current_revision(store.engine) == migrate.head_revision()


def test_the_judgments_export_says_which_pairs_are_gold(store, add_sample):
    from storage import ExternalPairJudgment

    a, b, c = add_sample(method="m0"), add_sample(method="m1"), add_sample(method="m2")
    store.pair_gold.mark(a.id, b.id, "cp", "a")
    store.pairwise.import_external(
        "group", [ExternalPairJudgment(b.id, a.id, "pf", "left"), ExternalPairJudgment(a.id, c.id, "cp", "tie")]
    )
    columns, rows = store.pairwise.export_table("ds")
    assert columns[-1] == "gold"
    # the pf judgment of the gold pair is marked too: a gold pair never counts for a method, whatever the criterion
    assert {(r["left_sample_id"], r["right_sample_id"]): r["gold"] for r in rows} == {
        (b.id, a.id): "gold",
        (a.id, c.id): None,
    }
