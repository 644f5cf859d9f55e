"""Agreement tab: the `masc-ui agreement` table for the stored ratings, and its plots."""
from __future__ import annotations

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.agreement import MAX_BOOTSTRAP, agreement_view, scatter_series, table_rows
from .agreement_plot import agreement_figure
from .users import user_of


def build(wb: Workbench) -> None:
    with gr.Row():
        dataset = gr.Textbox(label="Dataset (empty = all)", elem_id="agree-dataset")
        criterion = gr.Radio([("concept preservation", "cp"), ("prompt following", "pf"),
                              ("ImagenHub semantic consistency", "sc"), ("ImagenHub perceptual quality", "pq")],
                             value="cp",
                             label="Human ratings of", elem_id="agree-criterion")
        metric = gr.Dropdown([], value=None, label="Metric for the scatter plot", allow_custom_value=True,
                             elem_id="agree-metric")
        n_boot = gr.Number(2000, precision=0, minimum=0, maximum=MAX_BOOTSTRAP, label="Bootstrap resamples",
                           elem_id="agree-nboot")
    run = gr.Button("Compute agreement", variant="primary", elem_id="agree-run")
    table = gr.Dataframe(interactive=False, elem_id="agree-table")
    text = gr.Code(label="As printed by `masc-ui agreement`", language=None, elem_id="agree-text")
    plot = gr.Plot(label="Metric vs humans", elem_id="agree-plot")
    message = gr.Markdown(elem_id="agree-message")

    def on_run(ds, crit, chosen, boots, request: gr.Request, progress=gr.Progress()):
        try:
            progress(0.1, desc="bootstrapping confidence intervals")
            view = agreement_view(wb.database, user=user_of(request), dataset=(ds or "").strip() or None,
                                  criterion=crit, n_boot=int(boots or 0))
            names = view.data.metric_names
            chosen = chosen if chosen in names else (names[0] if names else None)
            series = scatter_series(view, chosen) if chosen else None
            headers, rows = table_rows(view)
            fig = agreement_figure(view, series, demo=wb.status().is_demo)
        except WorkbenchError as exc:
            return gr.update(), gr.update(), gr.update(), gr.update(), f"⚠ {exc}"
        return ({"headers": headers, "data": rows}, view.text, fig,
                gr.update(choices=view.data.metric_names, value=chosen), "")

    run.click(on_run, [dataset, criterion, metric, n_boot], [table, text, plot, metric, message],
              api_name="agreement")
