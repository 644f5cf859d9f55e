"""Renderings of a `Leaderboard`: Markdown, CSV and LaTeX (booktabs) tables, each a pure function of it.

Cell text: `mean [ci_low, ci_high] (rank)` in significant digits, as many in a column as separate its different means
(`numbers.column_digits`: ranks never rest on digits that are not shown); `n/a` for an undefined mean; no brackets
without a CI (n_boot=0).
Markdown and LaTeX hold two tables: the leaderboard (one row per group) and the rank agreement (one row per
metric, one column per criterion: Kendall tau-b [CI] over n groups). CSV is machine-readable: one table, wide,
one row per group (`leaderboard_csv`); the rank agreement has its own (`rank_agreement_csv`). Numbers in CSV are
written with `repr` precision; empty cells are undefined values.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable

from .bootstrap import Estimate
from .leaderboard import Leaderboard, LeaderboardCell
from .numbers import column_digits, format_interval, format_value
from .report import format_estimate

HUMAN_PREFIX = "human "
"""Column title prefix of a criterion's mean human rating (`human cp`)."""
CSV_HUMAN_PREFIX = "human_"
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def leaderboard_markdown(board: Leaderboard, digits: int = 3) -> str:
    """GitHub-flavoured Markdown: a caption line, the leaderboard table, then the rank agreement table."""
    head = [
        board.by,
        "n",
        *(f"{m} {_arrow(board, m)}" for m in board.metrics),
        *(f"{HUMAN_PREFIX}{c} ↑" for c in board.criteria),
    ]
    shown = column_precision(board, digits)
    body = [
        [
            _md(r.group),
            str(r.n),
            *(_cell_text(r.metrics[m], shown[m]) for m in board.metrics),
            *(_cell_text(r.humans[c], shown[HUMAN_PREFIX + c]) for c in board.criteria),
        ]
        for r in board.rows
    ]
    lines = [_caption(board), "", *_md_table(head, body, right_from=1)]
    if board.agreement:
        lines += ["", f"Rank agreement with the humans (Kendall tau-b over {board.by}s) [{_ci_words(board)}]", ""]
        head = ["metric", *(f"tau vs {HUMAN_PREFIX}{c}" for c in board.criteria)]
        body = [[_md(m), *(_tau_text(board, m, c, digits) for c in board.criteria)] for m in board.metrics]
        lines += _md_table(head, body, right_from=1)
    return "\n".join(lines) + "\n"


def leaderboard_csv(board: Leaderboard) -> str:
    """One row per group: `<by>, n`, then per metric `<m>_mean, <m>_ci_low, <m>_ci_high, <m>_n, <m>_rank`,
    then per criterion the same with prefix `human_<c>`."""
    names = [*board.metrics, *(f"{CSV_HUMAN_PREFIX}{c}" for c in board.criteria)]
    head = [board.by, "n", *(f"{name}_{part}" for name in names for part in ("mean", "ci_low", "ci_high", "n", "rank"))]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    for r in board.rows:
        cells = [*(r.metrics[m] for m in board.metrics), *(r.humans[c] for c in board.criteria)]
        writer.writerow([r.group, r.n, *(v for c in cells for v in (*_numbers(c.mean), c.n, _blank(c.rank)))])
    return out.getvalue()


def rank_agreement_csv(board: Leaderboard) -> str:
    """One row per (metric, criterion): `metric, criterion, n_groups, tau, ci_low, ci_high`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["metric", "criterion", "n_groups", "tau", "ci_low", "ci_high"])
    for a in board.agreement:
        writer.writerow([a.metric, a.criterion, a.n_groups, *_numbers(a.tau)])
    return out.getvalue()


def leaderboard_latex(board: Leaderboard, digits: int = 3) -> str:
    """Two `tabular`s with booktabs rules (`\\usepackage{booktabs}`); the best group of each column (rank 1) in
    bold, the CI in `\\scriptsize`. A comment line states the CI and direction conventions."""
    spec = "l" + "r" + "c" * (len(board.metrics) + len(board.criteria))
    head = [
        _tex(board.by),
        "$n$",
        *(f"{_tex(m)} {_tex_arrow(board, m)}" for m in board.metrics),
        *(f"{_tex(HUMAN_PREFIX + c)} $\\uparrow$" for c in board.criteria),
    ]
    lines = [
        f"% {_caption(board)}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(head) + r" \\",
        "\\midrule",
    ]
    shown = column_precision(board, digits)
    columns = [*board.metrics, *(HUMAN_PREFIX + c for c in board.criteria)]
    for r in board.rows:
        cells = [*(r.metrics[m] for m in board.metrics), *(r.humans[c] for c in board.criteria)]
        texts = [_tex_cell(cell, shown[name]) for cell, name in zip(cells, columns)]
        lines.append(" & ".join([_tex(r.group), str(r.n), *texts]) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    if board.agreement:
        lines += [
            "",
            f"% Rank agreement with the humans: Kendall tau-b over {board.by}s [{_ci_words(board)}]",
            f"\\begin{{tabular}}{{l{'c' * len(board.criteria)}}}",
            "\\toprule",
            " & ".join(["metric", *(f"$\\tau_b$ vs {_tex(HUMAN_PREFIX + c)}" for c in board.criteria)]) + r" \\",
            "\\midrule",
        ]
        for m in board.metrics:
            taus = [_tex_estimate(board.rank_agreement(m, c).tau, digits) for c in board.criteria]
            lines.append(" & ".join([_tex(m), *taus]) + r" \\")
        lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[Leaderboard], str]] = {
    "md": leaderboard_markdown,
    "csv": leaderboard_csv,
    "latex": leaderboard_latex,
}
"""`--format` name -> renderer."""


def column_precision(board: Leaderboard, digits: int = 3) -> dict[str, int]:
    """Column (a metric, or `human <criterion>`) -> significant digits its means are shown with: at least `digits`,
    more where two different means would otherwise read the same."""
    shown = {m: column_digits([r.metrics[m].mean.value for r in board.rows], digits) for m in board.metrics}
    for c in board.criteria:
        shown[HUMAN_PREFIX + c] = column_digits([r.humans[c].mean.value for r in board.rows], digits)
    return shown


def _caption(board: Leaderboard) -> str:
    lo, hi = board.rating_range
    return (
        f"Leaderboard by {board.by}: mean [{_ci_words(board)}] (rank, 1 = best); human ratings on the "
        f"{lo:g}-{hi:g} scale, averaged over raters per sample, then over samples"
        + (f"; {board.n_ungrouped} sample(s) without a {board.by} left out" if board.n_ungrouped else "")
    )


def _ci_words(board: Leaderboard) -> str:
    if not board.n_boot:
        return "no confidence intervals (n_boot=0)"
    return (
        f"{board.level:.0%} percentile bootstrap CI over samples within each {board.by}, "
        f"{board.n_boot} resamples, seed {board.seed}"
    )


def _arrow(board: Leaderboard, metric: str) -> str:
    return "↑" if board.higher_is_better[metric] else "↓"


def _tex_arrow(board: Leaderboard, metric: str) -> str:
    return "$\\uparrow$" if board.higher_is_better[metric] else "$\\downarrow$"


def _cell_text(cell: LeaderboardCell, digits: int) -> str:
    text = format_estimate(cell.mean, digits)
    return text if cell.rank is None else f"{text} ({cell.rank})"


def _tau_text(board: Leaderboard, metric: str, criterion: str, digits: int) -> str:
    a = board.rank_agreement(metric, criterion)
    return f"{format_estimate(a.tau, digits)} (n={a.n_groups})"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(head: list[str], body: list[list[str]], right_from: int) -> list[str]:
    # at least 3 wide: a delimiter cell needs a hyphen besides its colon (GitHub renders no table otherwise)
    widths = [max(3, len(head[i]), *(len(row[i]) for row in body)) for i in range(len(head))]
    rule = ["-" * (w - 1) + ":" if i >= right_from else "-" * w for i, w in enumerate(widths)]
    rows = [head, rule, *body]
    return ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]


def _numbers(e: Estimate) -> tuple[str, str, str]:
    return tuple("" if math.isnan(v) else repr(float(v)) for v in (e.value, e.ci_low, e.ci_high))  # type: ignore[return-value]


def _blank(value: int | None) -> str | int:
    return "" if value is None else value


def _tex(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def _tex_estimate(e: Estimate, digits: int, bold: bool = False) -> str:
    if math.isnan(e.value):
        return "n/a"
    value = format_value(e.value, digits)
    text = f"\\textbf{{{value}}}" if bold else value
    interval = format_interval(e.ci_low, e.ci_high, digits)
    if interval:
        text += f" {{\\scriptsize {interval}}}"
    return text


def _tex_cell(cell: LeaderboardCell, digits: int) -> str:
    return _tex_estimate(cell.mean, digits, bold=cell.rank == 1)
