"""Text people typed (prompts, flag reasons) shown as it is inside a Markdown component: nothing in it is markup,
so a Markdown image (`![t](http://host/x.png)`), a link, emphasis, a formula or raw HTML in a prompt shows as typed
and makes the browser fetch nothing."""

from __future__ import annotations

import string

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_ESCAPED = {c: _ENTITIES.get(c, "\\" + c) for c in string.punctuation}
"""Each ASCII punctuation character as Markdown that renders it literally: HTML's special characters as entities,
every other one backslash-escaped (CommonMark: any ASCII punctuation character may be escaped)."""
_TABLE = str.maketrans(_ESCAPED)


def literal(text: str) -> str:
    """Markdown that renders as exactly the characters of `text` (line breaks as `<br>`). Use it with a Markdown
    component whose LaTeX delimiters are off (`latex_delimiters=[]`): a formula renderer looks at the text before
    Markdown's escapes are applied."""
    return "<br>".join(line.translate(_TABLE) for line in str(text).splitlines())
