"""The pairwise report (admins): what `masc-ui agreement --pairwise --criterion C` prints for the stored pairwise
judgments of a dataset — the methods' Bradley-Terry strengths (Davidson ties) with bootstrap CIs next to their Elo
ratings, the win-rate matrix, the raters' agreement on pairs, and each metric's pairwise accuracy with its CI (human
ties left out, and counted) — as tables plus the CLI's text (`masc_ui.workbench.pairwise_analysis`), under the
warnings of the ratings view's rules (few pairs, a single rater, no CIs; no method told apart).

`build(wb, page)` lays it out inside the caller's container: the Agreement tab's pairwise section."""

from __future__ import annotations

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.agreement import MAX_BOOTSTRAP
from ..workbench.pairwise_analysis import (
    CriterionReport,
    accuracy_rows,
    bradley_terry_rows,
    win_rate_rows,
)
from ..workbench.rater_selection import RaterSelection
from ..workbench.ratings import CRITERION_NAMES
from .dataset_picker import dataset_picker, refresh_on_open
from .users import user_of

ACCURACY_WIDTHS = ["13%", "13%", "19%", "9%", "12%", "21%", "13%"]
"""Columns of `accuracy_rows` (metric, accuracy, CI, pairs, metric ties, human ties, missing): every header
fits its words at 800 px."""


def build(wb: Workbench, page: gr.Tab | None = None) -> None:
    """The report's inputs and outputs; with `page`, its dataset choices are refreshed when `page` is opened."""
    with gr.Row(equal_height=True):
        dataset = dataset_picker("pw-dataset")
        criterion = gr.Radio(
            [("concept preservation", "cp"), ("prompt following", "pf")],
            value="cp",
            label="Criterion",
            elem_id="pw-criterion",
        )
        n_boot = gr.Number(
            2000, precision=0, minimum=0, maximum=MAX_BOOTSTRAP, label="Bootstrap resamples", elem_id="pw-nboot"
        )
        raters = gr.Textbox(
            value="all",
            label="Raters counted",
            info="all · unmarked (all but those the rater report marks) · names: ann,ben",
            max_lines=1,
            elem_id="pw-raters",
            min_width=200,
        )
    with gr.Row(equal_height=True):
        run = gr.Button("Compute pairwise results", variant="primary", scale=0, min_width=240, elem_id="pw-run")
        message = gr.Markdown(elem_id="pw-message")
    warnings = gr.Markdown(elem_id="pw-warnings")
    summary = gr.Markdown(elem_id="pw-summary")
    ranking = gr.Dataframe(
        interactive=False,
        wrap=True,
        elem_id="pw-ranking",
        label="Method ranking: Bradley-Terry θ (95% bootstrap CI over output pairs), Elo",
    )
    win_rate = gr.Dataframe(
        interactive=False,
        wrap=True,
        elem_id="pw-winrate",
        label="Win rate of the row method against the column method (a tie counts 1/2)",
    )
    accuracy = gr.Dataframe(
        interactive=False,
        wrap=True,
        elem_id="pw-accuracy",
        column_widths=ACCURACY_WIDTHS,
        label="Metric pairwise accuracy: share of human-decided pairs where the metric prefers "
        "the same output (95% CI over decided pairs)",
    )
    with gr.Accordion("As printed by `masc-ui agreement --pairwise --criterion ...`", open=False):
        text = gr.Code(show_label=False, language=None, elem_id="pw-text")
    if page is not None:
        refresh_on_open(wb, page, dataset, message, "pairwise_datasets")

    outputs = [warnings, summary, ranking, win_rate, accuracy, text, message]

    def on_run(ds, crit, boots, who="all", request: gr.Request = None, progress=gr.Progress()):
        try:
            progress(0.1, desc="fitting Bradley-Terry and bootstrapping")
            report = wb.pairwise_analysis.report(
                user=user_of(request),
                dataset=(ds or "").strip() or None,
                criterion=crit,
                n_boot=int(boots if boots is not None else 2000),
                raters=RaterSelection.parse(who),
            )
        except WorkbenchError as exc:
            return {message: f"⚠ {exc}"}
        part = report.criteria[0]
        return {
            warnings: "\n".join(f"- ⚠ {w}" for w in part.warnings),
            summary: summary_markdown(part, report.counted.text()),
            ranking: _grid(*bradley_terry_rows(part)),
            win_rate: _grid(*win_rate_rows(part)),
            accuracy: _grid(*accuracy_rows(part)),
            text: report.text(),
            message: f"{part.n_judgments} judgments of {CRITERION_NAMES.get(part.criterion, part.criterion)}; "
            f"{report.counted.text()}",
        }

    run.click(on_run, [dataset, criterion, n_boot, raters], outputs, api_name="pairwise_report")


def summary_markdown(part: CriterionReport, counted_text: str = "raters counted: all") -> str:
    """Counts of the criterion `part` (its judgments, skips and flags) and whose judgments they are
    (`counted_text`), what is left out of which statistic, why there is no ranking (if so), the raters'
    agreement."""
    human_ties = max((r.n_human_ties for r in part.accuracy), default=0)
    lines = [
        f"**{part.n_judgments} judgments** of {CRITERION_NAMES.get(part.criterion, part.criterion)} "
        f"({part.n_both_bad} flagged 'both bad': their winner still counts); {part.n_skipped} skipped and "
        f"{part.n_flagged} flagged answers carry no preference and are left out; {counted_text}.",
        "",
        f"**Human ties are left out of the metric accuracy**: {human_ties} pair(s) whose decisive votes are "
        "balanced (or only ties) are not counted; a metric tie counts 1/2.",
    ]
    if part.ranking_note is not None:
        lines += ["", f"No method ranking: {part.ranking_note}"]
    elif part.bradley_terry is not None and part.bradley_terry.reason is not None:
        lines += ["", f"Bradley-Terry strengths are n/a: {part.bradley_terry.reason}"]
    lines += ["", "```", part.agreement_text(), "```"]
    return "\n".join(lines)


def _grid(headers: list[str], rows: list[list]) -> dict:
    return {"headers": headers, "data": rows}
