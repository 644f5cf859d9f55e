"""Pairwise task assignment: even coverage of method pairs, never the same pair twice to a rater, K overlap."""

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from masc_ui.analysis.pair_planner import PairCandidate, next_pair, plan_pairs
from masc_ui.analysis.pairwise_data import PairJudgment
from masc_ui.errors import InputError

METHODS = ("dreambooth", "emu2", "ip_adapter", "blip")


def outputs(references=5, prompts=2, extra_seed=True):
    """One output per method per (reference, prompt); `dreambooth` has a second seed on reference 0."""
    out = []
    for r in range(references):
        for p in range(prompts):
            for m in METHODS:
                out.append(PairCandidate(f"{m}/ref{r}-p{p}", f"ref{r}", f"prompt {p}", m))
            if extra_seed and r == 0:
                out.append(PairCandidate(f"dreambooth/ref0-p{p}-seed2", "ref0", f"prompt {p}", "dreambooth"))
    return out


def test_pairs_are_outputs_of_different_methods_for_the_same_reference_and_prompt():
    items = outputs()
    plan = plan_pairs(items, seed=1)
    expected = {
        tuple(sorted((x.sample_id, y.sample_id)))
        for x, y in combinations(items, 2)
        if (x.reference, x.prompt) == (y.reference, y.prompt) and x.method != y.method
    }
    assert {p.key for p in plan.pairs} == expected and len(plan.pairs) == len(expected)
    assert all(p.a < p.b and p.method_a != p.method_b for p in plan.pairs)
    assert len(plan.method_pairs) == 6
    assert plan_pairs(list(reversed(items)), seed=1).pairs == plan.pairs  # input order does not matter
    assert plan_pairs(items, seed=2).pairs != plan.pairs  # the seed orders them
    assert plan.index("emu2/ref1-p0", "blip/ref1-p0") == plan.index("blip/ref1-p0", "emu2/ref1-p0") is not None
    assert plan.index("emu2/ref1-p0", "blip/ref2-p0") is None


def simulate(plan, raters, overlap, seed=0, prefer_uncertain=False):
    """Raters ask in a random order until nobody gets a pair; returns the assignments and per-step checks."""
    rng = np.random.default_rng(seed)
    assignments = []
    active = list(raters)
    while active:
        rater = active[rng.integers(len(active))]
        coverage = plan.coverage(assignments)
        given = Counter(plan.index(*key) for _, key in assignments)
        mine = {plan.index(*key) for r, key in assignments if r == rater}
        open_method_pairs = {
            plan.pairs[k].method_pair for k in range(len(plan.pairs)) if k not in mine and given[k] < overlap
        }
        task = next_pair(plan, rater, assignments, overlap, prefer_uncertain=prefer_uncertain)
        if task is None:
            assert not open_method_pairs
            active.remove(rater)
            continue
        # even coverage: no method pair this rater could still take is behind the chosen one
        assert coverage[task.pair.method_pair] == min(coverage[mp] for mp in open_method_pairs)
        assignments.append((rater, (task.left, task.right)))
    return assignments


@pytest.mark.parametrize("n_raters, overlap", [(5, 3), (2, 3), (4, 1)])
def test_even_coverage_no_repeats_and_k_overlap(n_raters, overlap):
    plan = plan_pairs(outputs(), seed=3)
    raters = [f"u{k}" for k in range(n_raters)]
    assignments = simulate(plan, raters, overlap)
    keys = [(r, tuple(sorted(key))) for r, key in assignments]
    assert len(keys) == len(set(keys))  # never the same pair twice to a rater
    per_pair = Counter(key for _, key in keys)
    assert set(per_pair) == {p.key for p in plan.pairs}
    assert set(per_pair.values()) == {min(overlap, n_raters)}  # exactly K raters per pair (or all raters)
    coverage = plan.coverage(assignments)
    pairs_per_method_pair = Counter(p.method_pair for p in plan.pairs)
    assert coverage == {mp: n * min(overlap, n_raters) for mp, n in pairs_per_method_pair.items()}


def test_coverage_stays_level_while_every_method_pair_has_pairs():
    plan = plan_pairs(outputs(references=8, extra_seed=False), seed=0)
    assignments = []
    for step in range(60):  # well before any method pair runs out (each has 16 pairs x K=2)
        task = next_pair(plan, f"u{step % 3}", assignments, overlap=2)
        assignments.append((f"u{step % 3}", task.pair.key))
        counts = plan.coverage(assignments).values()
        assert max(counts) - min(counts) <= 1


def test_overlap_groups_complete_before_new_pairs_start():
    plan = plan_pairs([PairCandidate(f"{m}{k}", f"ref{k}", "p", m) for k in range(4) for m in "AB"], seed=0)
    first = next_pair(plan, "u1", [], overlap=3)
    second = next_pair(plan, "u2", [("u1", first.pair.key)], overlap=3)
    assert second.pair == first.pair  # one method pair: the started pair gets its next rater


def test_prefer_uncertain_orders_by_the_closest_votes():
    plan = plan_pairs([PairCandidate(f"{m}{k}", f"ref{k}", "p", m) for k in range(3) for m in "AB"], seed=0)
    decided, split, fresh = (plan.index(f"A{k}", f"B{k}") for k in range(3))
    decided_pair, split_pair = plan.pairs[decided], plan.pairs[split]
    assignments = [("u1", decided_pair.key), ("u2", decided_pair.key), ("u1", split_pair.key), ("u2", split_pair.key)]
    judgments = [
        PairJudgment(decided_pair.a, decided_pair.b, "cp", "left", "u1"),
        PairJudgment(decided_pair.b, decided_pair.a, "cp", "right", "u2"),  # both for a
        PairJudgment(split_pair.a, split_pair.b, "cp", "left", "u1"),
        PairJudgment(split_pair.a, split_pair.b, "cp", "right", "u2"),
    ]
    pick = next_pair(plan, "u3", assignments, overlap=3, judgments=judgments, prefer_uncertain=True)
    assert pick.pair.key == split_pair.key
    after = assignments + [("u3", split_pair.key)]
    pick = next_pair(plan, "u3", after, overlap=3, judgments=judgments, prefer_uncertain=True)
    assert pick.pair.key == plan.pairs[fresh].key  # no vote yet beats a 2-0 pair
    plain = next_pair(plan, "u3", after, overlap=3, judgments=judgments)
    assert plain.pair.key == decided_pair.key  # without the rule: the started pair first


def test_left_right_is_a_recorded_seeded_coin():
    plan = plan_pairs(outputs(references=10), seed=5)
    tasks = [next_pair(plan, f"u{k}", [], overlap=1) for k in range(200)]
    assert all((t.left, t.right) == ((t.pair.b, t.pair.a) if t.swapped else (t.pair.a, t.pair.b)) for t in tasks)
    assert 70 <= sum(t.swapped for t in tasks) <= 130
    again = [next_pair(plan, f"u{k}", [], overlap=1) for k in range(200)]
    assert [t.swapped for t in again] == [t.swapped for t in tasks]


def test_unknown_assignments_are_ignored_and_empty_plans_give_nothing():
    plan = plan_pairs(outputs(references=1, prompts=1, extra_seed=False))
    assert next_pair(plan, "u", [("v", ("gone1", "gone2"))], overlap=1) is not None
    empty = plan_pairs([PairCandidate("x", "r", "p", "A"), PairCandidate("y", "r", "p", "A")])
    assert empty.pairs == () and next_pair(empty, "u", [], overlap=2) is None


def test_errors():
    plan = plan_pairs(outputs(references=1))
    with pytest.raises(InputError, match="overlap"):
        next_pair(plan, "u", [], overlap=0)
    with pytest.raises(InputError, match="seed"):
        plan_pairs(outputs(references=1), seed=-1)
    with pytest.raises(InputError, match="twice"):
        plan_pairs([PairCandidate("x", "r", "p", "A"), PairCandidate("x", "r", "p", "B")])
