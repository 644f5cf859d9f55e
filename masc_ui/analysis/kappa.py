"""Fleiss' kappa for several raters assigning categories (as `statsmodels`' `aggregate_raters` +
`fleiss_kappa(method="fleiss")`, which the ImagenHub notebook uses)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def fleiss_kappa(ratings: np.ndarray) -> float:
    """Fleiss' kappa of a complete rating table.

    Args:
        ratings: array (units, raters) of category values (any numbers; each distinct value is a
            category); every unit rated by every rater (no NaN).
    Returns:
        kappa = (P_bar - P_e) / (1 - P_e), with P_bar the mean per-unit agreement among rater pairs and
        P_e the sum of squared category proportions; NaN when only one category occurs (P_e = 1).
    """
    table = np.asarray(ratings, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 2:
        raise InputError(
            f"Fleiss' kappa needs a (units, raters) table with >= 1 unit and >= 2 raters; got {table.shape}"
        )
    if np.isnan(table).any():
        raise InputError("Fleiss' kappa needs every unit rated by every rater; the table has missing (NaN) ratings")
    n_units, n_raters = table.shape
    categories, codes = np.unique(table, return_inverse=True)
    counts = np.zeros((n_units, categories.size))
    np.add.at(counts, (np.repeat(np.arange(n_units), n_raters), codes.ravel()), 1.0)
    p_cat = counts.sum(axis=0) / (n_units * n_raters)
    p_unit = ((counts * counts).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1))
    p_bar = p_unit.mean()
    p_e = (p_cat * p_cat).sum()
    if p_e >= 1.0:
        return float("nan")
    return float((p_bar - p_e) / (1.0 - p_e))
