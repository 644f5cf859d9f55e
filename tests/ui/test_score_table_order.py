"""The score table lists metrics in the registry's order whatever order they were ticked in; an "all" preset."""

from __future__ import annotations

import re

from masc_ui.ui.score_table import score_table_html
from masc_ui.workbench import ScoreReport
from masc_ui.workbench.scoring import score_row

from .test_empty_defaults import _components


def test_rows_follow_the_registry_not_the_click_order():
    from masc_ui.metrics.registry import get_spec

    clicked = ["facesim", "pf", "clip_t", "cp"]
    report = ScoreReport([score_row(get_spec(n), 0.5, None) for n in clicked])
    shown = re.findall(r'data-metric="([^"]+)"', score_table_html(report))
    assert shown == ["cp", "pf", "clip_t", "facesim"]


def test_an_all_preset_ticks_every_metric_offered(tmp_path, demo_weights):
    shown = _components(tmp_path, demo_weights, None)
    assert shown["preset-all"]["value"].startswith("all")
    offered = [c[1] if isinstance(c, (list, tuple)) else c for c in shown["metric-pick"]["choices"]]
    assert sorted(shown["metric-pick"]["value"]) == sorted(offered)
