"""The Raters tab's Gold pairs section (admins): mark a pair of samples with its accepted answer (a, b or tie), remove
the mark, make a dataset's pair attention checks, and list them; the same use cases as `masc-ui gold pair ...`
(`workbench.pair_gold`)."""

from __future__ import annotations

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.pair_gold import split_pair
from .gold_section import GoldSection
from .users import user_of

PAIR_GOLD_NOTE = (
    "A gold pair is two samples of the dataset whose better one you know, per criterion: **a** (the first named), "
    "**b** (the second) or **tie**. Raters get gold pairs mixed into their pairs at `MASC_GOLD_RATE`, shown exactly "
    "like other pairs; their answers measure the rater (the report's *pair gold* column) and never count for a "
    "method. Name the samples by key or `#id`, comma between (`k12,k31`). **Make pair attention checks** adds, per "
    "subject, one output shown on both sides (accepted tie)."
)


def build(wb: Workbench, dataset: gr.Dropdown, message: gr.Markdown) -> None:
    """The section, under the tab's `dataset` picker, writing its outcome to the tab's `message`."""
    with gr.Accordion("Gold pairs", open=False, elem_id="pair-gold-box"):
        gr.Markdown(PAIR_GOLD_NOTE, elem_id="pair-gold-note")
        with gr.Row(equal_height=True):
            pair = gr.Textbox(label="Pair (A,B: keys or #ids)", elem_id="pair-gold-pair", max_lines=1, min_width=200)
            criterion = gr.Radio(["cp", "pf"], value="cp", label="Criterion", elem_id="pair-gold-criterion")
            accepted = gr.Radio(["a", "b", "tie"], value="a", label="Accepted answer", elem_id="pair-gold-accepted")
            note = gr.Textbox(label="Why (admins only)", elem_id="pair-gold-why", max_lines=1, min_width=200)
        with gr.Row():
            mark = gr.Button("Mark pair as gold", variant="primary", elem_id="pair-gold-mark", scale=0, min_width=180)
            unmark = gr.Button("Remove the pair's mark", elem_id="pair-gold-unmark", scale=0, min_width=200)
            attention = gr.Button("Make pair attention checks", elem_id="pair-gold-attention", scale=0, min_width=220)
        table = gr.Dataframe(interactive=False, wrap=False, elem_id="pair-gold-table", label="Gold pairs")

    section = GoldSection(table, message, wb.pair_gold.table)

    def on_mark(ds, text, crit, answer, why, request: gr.Request):
        def mark_pair(user: str | None, name: str) -> str:
            first, second = split_pair(text)
            record = wb.pair_gold.mark(
                user=user, dataset=name, first=first, second=second, criterion=crit, accepted=answer, note=why
            )
            return f"pair {first},{second} is a gold pair: {record.criterion} accepts {answer}"

        return section.act(ds, request, mark_pair)

    def on_unmark(ds, text, crit, request: gr.Request):
        def unmark_pair(user: str | None, name: str) -> str:
            first, second = split_pair(text)
            n = wb.pair_gold.unmark(user=user, dataset=name, first=first, second=second, criterion=crit)
            return f"removed {n} gold mark(s) of the pair" if n else "that pair was not gold"

        return section.act(ds, request, unmark_pair)

    def on_attention(ds, request: gr.Request):
        return section.act(
            ds, request, lambda user, name: wb.pair_gold.make_attention_checks(user=user, dataset=name).text()
        )

    def on_dataset(ds, request: gr.Request):
        name = (ds or "").strip()
        if not name:
            return {table: gr.update()}  # Gradio reads an empty dict as one value, not as "nothing changes"
        try:
            return {table: section.listing(user_of(request), name)}
        except WorkbenchError:
            return {table: gr.update()}  # the tab's own listing says what is wrong with the dataset

    mark.click(on_mark, [dataset, pair, criterion, accepted, note], [table, message], api_name="pair_gold_mark")
    unmark.click(on_unmark, [dataset, pair, criterion], [table, message], api_name="pair_gold_unmark")
    attention.click(on_attention, [dataset], [table, message], api_name="pair_gold_attention")
    dataset.change(on_dataset, [dataset], [table], api_name="pair_gold_list")
