"""Mask dependence of a metric's ranking: the groups ranked by their own-mask means and by their means under each
mask variant of the stored checks; a variant that reorders them is reported with the groups that moved."""

from __future__ import annotations

from masc_ui.analysis.mask_dependence import MaskCheck, RankMove, mask_dependence


def _checks(rows):
    return [MaskCheck(group, own, variants) for group, own, variants in rows]


def test_a_variant_that_swaps_two_methods_is_reported():
    checks = _checks(
        [
            ("a", 0.80, {"eroded 3 px": 0.70, "dilated 3 px": 0.81}),
            ("a", 0.78, {"eroded 3 px": 0.72, "dilated 3 px": 0.79}),
            ("b", 0.75, {"eroded 3 px": 0.76, "dilated 3 px": 0.74}),
            ("b", 0.74, {"eroded 3 px": 0.75, "dilated 3 px": None}),
            ("c", 0.50, {"eroded 3 px": 0.40, "dilated 3 px": 0.52}),
        ]
    )
    found = mask_dependence("cp", checks)
    assert found.groups == ("a", "b", "c") and found.own_ranks == (1, 2, 3) and found.n_samples == 5
    assert found.depends and list(found.moves) == ["eroded 3 px"]  # dilating keeps a > b > c
    assert found.moves["eroded 3 px"] == (RankMove("a", 1, 2), RankMove("b", 2, 1))
    assert found.sentence("MaSC CP") == (
        "MaSC CP: the ranking of methods changes with the masks eroded 3 px (a 1 -> 2, b 2 -> 1); 5 samples checked"
    )


def test_the_direction_of_the_metric_is_respected_and_a_stable_ranking_is_said_so():
    checks = _checks([("a", 0.2, {"eroded 3 px": 0.25}), ("b", 0.4, {"eroded 3 px": 0.45})])
    lower_better = mask_dependence("dreamsim_seg", checks, higher_is_better=False)
    assert lower_better.own_ranks == (1, 2) and not lower_better.depends
    assert lower_better.sentence("DreamSim-Seg", "category") == (
        "DreamSim-Seg: the ranking of categories is the same with every mask variant checked (2 samples)"
    )


def test_ungrouped_or_single_group_checks_change_nothing():
    assert mask_dependence("cp", _checks([(None, 0.5, {"eroded 3 px": 0.1})])) is None
    one = mask_dependence("cp", _checks([("a", 0.5, {"eroded 3 px": 0.1}), ("a", 0.6, {"eroded 3 px": 0.9})]))
    assert one.groups == ("a",) and not one.depends
