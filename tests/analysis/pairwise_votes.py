"""Synthetic pairwise judgments drawn from Davidson's model with known strengths (shared by the pairwise tests)."""

from __future__ import annotations

import numpy as np


def davidson_judgments(theta, nu, n_pairs, raters_per_pair=2, seed=0, criterion="cp"):
    """Judgment dicts on `n_pairs` output pairs of two different random methods (`m0`, `m1`, ...), each judged by
    `raters_per_pair` raters who see a random left/right order; outcomes drawn from Davidson's model."""
    rng = np.random.default_rng(seed)
    theta = np.asarray(theta, dtype=float)
    out = []
    for p in range(n_pairs):
        i, j = rng.choice(theta.size, size=2, replace=False)
        a, b = f"p{p}-x", f"p{p}-y"
        pi, pj = np.exp(theta[i]), np.exp(theta[j])
        tie = nu * np.sqrt(pi * pj)
        probs = np.array([pi, tie, pj]) / (pi + pj + tie)
        for r in range(raters_per_pair):
            result = rng.choice(3, p=probs)  # 0: a (method i) better, 1: tie, 2: b better
            swap = rng.random() < 0.5
            left, right = (b, a) if swap else (a, b)
            winner = "tie" if result == 1 else ("left" if (result == 0) != swap else "right")
            out.append(
                {
                    "left": left,
                    "right": right,
                    "criterion": criterion,
                    "winner": winner,
                    "rater": f"r{r}",
                    "left_method": f"m{j if swap else i}",
                    "right_method": f"m{i if swap else j}",
                }
            )
    return out


def method_outcomes(judgments):
    """(winner method or None for a tie, left method, right method) per judgment."""
    out = []
    for j in judgments:
        winner = None if j["winner"] == "tie" else j[f"{j['winner']}_method"]
        out.append((winner, j["left_method"], j["right_method"]))
    return out
