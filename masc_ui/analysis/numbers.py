"""How every number the workbench shows is written: significant digits, never a fixed count of decimals, so a
tiny value (VQAScore 2.49e-09) never reads `0.0000` and two values that differ never look the same.

    >>> format_value(0.123456), format_value(12.3456), format_value(0.00123), format_value(2.49e-09)
    ('0.1235', '12.35', '0.001230', '2.490e-09')
    >>> format_value(0.0), format_value(None), format_value(float("nan"))
    ('0', 'n/a', 'n/a')
    >>> column_digits([0.12341, 0.12342, 0.5])
    5
"""

from __future__ import annotations

import math
from collections.abc import Iterable

SIGNIFICANT = 4
"""Significant digits of a shown value unless a caller asks for more (or fewer)."""
MAX_SIGNIFICANT = 15
"""Most digits `column_digits` asks for (a float64 holds 15-17)."""
FIXED_RANGE = (1e-3, 1e6)
"""|x| in [low, high) is written in fixed notation; outside it, in scientific notation (`2.490e-09`)."""


def format_value(x: float | None, digits: int = SIGNIFICANT) -> str:
    """`x` with `digits` significant digits (trailing zeros kept, so a column reads at one precision): fixed
    notation for 1e-3 <= |x| < 1e6, scientific otherwise; `0` for zero, `n/a` for None or NaN, `inf` / `-inf`."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    digits = max(1, int(digits))
    if FIXED_RANGE[0] <= abs(x) < FIXED_RANGE[1]:
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
        return f"{x:.{decimals}f}"
    return f"{x:.{digits - 1}e}"


def column_digits(values: Iterable[float | None], digits: int = SIGNIFICANT) -> int:
    """The fewest significant digits (at least `digits`, at most `MAX_SIGNIFICANT`) at which every two different
    finite `values` are written differently: a leaderboard column or a comparison shows the digits that separate
    its values."""
    distinct = sorted({float(v) for v in values if v is not None and math.isfinite(float(v))})
    for d in range(max(1, digits), MAX_SIGNIFICANT + 1):
        if len({format_value(v, d) for v in distinct}) == len(distinct):
            return d
    return MAX_SIGNIFICANT


def format_interval(low: float, high: float, digits: int = SIGNIFICANT) -> str:
    """`[low, high]` with `format_value`; empty when either end is NaN (no interval)."""
    if math.isnan(low) or math.isnan(high):
        return ""
    return f"[{format_value(low, digits)}, {format_value(high, digits)}]"
