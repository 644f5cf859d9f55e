"""The Score tab shows the DreamBench++ judge's full answer (its reasoning) under its value, as text."""

from __future__ import annotations

import html

import numpy as np
from PIL import Image

from masc_ui.metrics.sample import MetricValue
from masc_ui.ui.score_table import judge_answers, score_table_html
from masc_ui.workbench import ScoreReport, build_workbench
from masc_ui.workbench.scoring import score_row


def _image(seed: int) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (64, 96, 3), dtype=np.uint8))


def test_the_local_judges_answer_is_shown_under_its_value(demo_settings):
    wb = build_workbench(demo_settings.replace(dbpp_judge="local", dbpp_max_new_tokens=12))
    sample = wb.scoring.make_sample([_image(1)], _image(2), "a cat on the beach", "cat")
    report = wb.scoring.score(sample, ["dbpp_pf", "clip_t"], user=None)
    answer = report.values["dbpp_pf"].extras["answer"]
    assert isinstance(answer, str) and answer
    assert set(judge_answers(report)) == {"dbpp_pf"}  # CLIP-T has no answer to show
    table = score_table_html(report)
    row = table.split('data-metric="dbpp_pf"')[1].split("</tr>")[0]
    assert "the judge's answer" in row and f'<div class="judge-answer-text">{html.escape(answer)}</div>' in row
    assert "judge-answer" not in table.split('data-metric="clip_t"')[1].split("</tr>")[0]


def test_an_answer_is_escaped_text():
    from masc_ui.metrics.registry import get_spec

    said = 'Score: 3 <img src=x onerror="alert(1)"> **bold**'
    value = MetricValue("dbpp_cp", 3.0, extras={"answer": said})
    report = ScoreReport([score_row(get_spec("dbpp_cp"), 3.0, None)], {"dbpp_cp": value})
    table = score_table_html(report)
    assert "<img" not in table and html.escape(said) in table
