"""What the Raters tab's two gold sections share (gold tasks in `raters_tab`, gold pairs in `pair_gold_section`): a
table of a dataset's gold marks and the tab's message line, and the one way a button that changes the marks answers
in them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from ..errors import WorkbenchError
from .users import user_of

PICK_A_DATASET = "⚠ pick a dataset first"


@dataclass(frozen=True)
class GoldSection:
    """A section's table of gold marks, the tab's message line, and `table_of` the use case's listing
    (`wb.gold.table` or `wb.pair_gold.table`: keyword `user`, `dataset` -> (headers, rows))."""

    table: gr.Dataframe
    message: gr.Markdown
    table_of: Callable[..., tuple[list[str], list[list[object]]]]

    def listing(self, user: str | None, dataset: str) -> dict:
        """The table's value for the gold marks of `dataset` as `user` may see them."""
        headers, rows = self.table_of(user=user, dataset=dataset)
        return {"headers": headers, "data": rows}

    def act(self, ds: str | None, request: gr.Request, action: Callable[[str | None, str], str]) -> dict:
        """`action(user, dataset)` on the dataset picked (`ds`): its words in the message and the dataset's marks
        after it in the table; without a dataset, or when the use case refuses, a warning and the table as it was."""
        name = (ds or "").strip()
        if not name:
            return {self.message: PICK_A_DATASET}
        user = user_of(request)
        try:
            said = action(user, name)
            return {self.table: self.listing(user, name), self.message: said}
        except WorkbenchError as exc:
            return {self.message: f"⚠ {exc}"}
