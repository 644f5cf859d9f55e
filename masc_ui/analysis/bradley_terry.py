"""Method strengths from pairwise votes: Bradley-Terry by maximum likelihood, ties by Davidson's model.

Model (Davidson 1970), for methods i, j with strengths pi = exp(theta) and tie parameter nu = exp(eta) >= 0:
    P(i beats j) = pi_i / D,   P(j beats i) = pi_j / D,   P(tie) = nu sqrt(pi_i pi_j) / D,
    D = pi_i + pi_j + nu sqrt(pi_i pi_j).
With nu = 0 this is plain Bradley-Terry; between equal methods nu = P(tie) / P(a given side wins), so
P(tie | equal) = nu / (2 + nu). Every vote between two different known methods counts once (a vote of each
rater on each output pair; see `pairwise_data.method_votes`).

Estimation: theta (log-strengths) and eta maximize the log-likelihood
    l = sum over method pairs of  w_ij theta_i + w_ji theta_j + t_ij (eta + (theta_i + theta_j) / 2)
                                  - n_ij log D_ij,
(w_ij: votes i beat j, t_ij: ties, n_ij: all their votes), which is concave in (theta, eta): log D is a
log-sum-exp of (theta_i, theta_j, eta + (theta_i + theta_j) / 2). Identifiability: l is unchanged when a
constant is added to every theta, so the estimate is the one with sum(theta) = 0 (pinned by adding
(sum theta)^2 / 2 to the objective, which changes nothing else). Optional `regularization` lambda adds
lambda / 2 * sum(theta^2) (a Gaussian prior with sd 1 / sqrt(lambda): MAP instead of ML). Without ties in the
data nu is 0 (eta is not fitted).

Optimizer: damped Newton on the convex objective with analytic gradient and Hessian, vectorized over bootstrap
resamples, from theta = 0 and nu = 2 t / (n - t) (the tie rate's estimate for equal methods); each step is
halved until the objective decreases (Armijo), and the fit stops when every gradient entry is below
`GRADIENT_TOL` x (1 + votes). At most `MAX_NEWTON_STEPS` steps.

When the maximum likelihood is not finite (checked exactly before fitting, `_Problem.obstacle`): it needs a
decisive vote; with lambda = 0 also a strongly connected graph "i beat or tied j" (else a group of methods that
never lost to the others goes to +infinity), and, with ties, no way to spread the strengths so that every
winner leads its loser by >= 1 while no tied pair is more than 1 apart (else theta spreads while nu grows,
e.g. one tie and one win between the same two methods). Such an estimate is undefined: NaN strengths with
the reason (`OBSTACLES`). A fit that still runs past |theta| or eta = `DIVERGENCE_LIMIT`, or does not
converge, is undefined too.

CIs: percentile bootstrap over *output pairs* (all votes on a resampled pair, from every rater, come with it,
so the votes of K raters on one pair are not taken as K independent observations); a resample whose estimate
is undefined is left out and counted (`n_boot_undefined`), which narrows the CI of very sparse data — check it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..errors import InputError
from .bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_N_BOOT,
    Estimate,
    bootstrap_index_chunks,
    check_resamples,
    estimate,
    resample_counts,
)
from .pairwise_data import A_WINS, B_WINS, TIE, MethodVotes, PairwiseData, method_votes
from .ranking import competition_ranks

GRADIENT_TOL = 1e-10
MAX_NEWTON_STEPS = 100
MAX_HALVINGS = 50
DIVERGENCE_LIMIT = 20.0
"""|theta| or eta beyond this (odds e^20 ~ 5e8) means the likelihood has no finite maximum."""
OBSTACLES = (
    "",
    "every vote is a tie: no method is preferred and the tie parameter has no finite estimate",
    "some methods never lost to (nor tied with) the others, so maximum likelihood sends their strength to "
    "infinity; collect more votes or pass regularization > 0",
    "the strengths diverge together with the tie parameter (a method tied with and beat another that never beat "
    "it back); collect more votes or pass regularization > 0",
    "the fit did not converge (strengths diverge); collect more votes or pass regularization > 0",
)
"""Why an estimate is undefined, by `_Problem.obstacle` code (the last: seen numerically)."""
ELO_SCALE = 400.0 / np.log(10.0)
ELO_OFFSET = 1000.0


@dataclass(frozen=True)
class BradleyTerryFit:
    """Davidson-Bradley-Terry strengths of the methods for one criterion."""

    criterion: str
    methods: tuple[str, ...]
    strength: Mapping[str, Estimate]
    """Method -> log-strength theta (sum 0 over methods) with its bootstrap CI."""
    rank: Mapping[str, int | None]
    """Method -> rank by theta (1 = strongest; ties share the best rank)."""
    tie: Estimate
    """Davidson's nu (0 when the data have no tie)."""
    log_likelihood: float
    n_votes: int
    """Votes between different known methods (those fitted)."""
    n_ties: int
    n_pairs: int
    """Output pairs those votes are on (the bootstrap units)."""
    n_excluded: int
    """Votes left out: both samples of one method, or a method unknown."""
    regularization: float
    n_boot: int
    seed: int | None
    level: float
    n_boot_undefined: int
    """Resamples on which the estimate was undefined (left out of the CIs)."""
    reason: str | None = None
    """Why the strengths are undefined (NaN), else None."""

    def elo_scale(self) -> dict[str, Estimate]:
        """Strengths on the arena's Elo-like scale: 1000 + 400 theta / ln 10 (a 400-point gap = 10:1 win odds
        without ties)."""
        return {
            m: Estimate(*(ELO_OFFSET + ELO_SCALE * v for v in (e.value, e.ci_low, e.ci_high)))
            for m, e in self.strength.items()
        }

    def probabilities(self, first: str, second: str) -> tuple[float, float, float]:
        """(P(first wins), P(tie), P(second wins)) under the fitted model."""
        for name in (first, second):
            if name not in self.strength:
                raise InputError(f"method {name!r} is not in this fit; methods: {', '.join(self.methods)}")
        return davidson_probabilities(self.strength[first].value, self.strength[second].value, self.tie.value)


def davidson_probabilities(theta_i: float, theta_j: float, nu: float) -> tuple[float, float, float]:
    """(P(i wins), P(tie), P(j wins)) of Davidson's model for log-strengths theta_i, theta_j and tie parameter nu."""
    top = max(theta_i, theta_j)
    pi_i, pi_j = np.exp(theta_i - top), np.exp(theta_j - top)
    tie = nu * np.sqrt(pi_i * pi_j)
    total = pi_i + pi_j + tie
    return float(pi_i / total), float(tie / total), float(pi_j / total)


def bradley_terry(
    data: PairwiseData,
    criterion: str,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = 0,
    level: float = DEFAULT_LEVEL,
    regularization: float = 0.0,
) -> BradleyTerryFit:
    """Fit Davidson-Bradley-Terry to the votes of `criterion` (see the module docstring).

    Args:
        data: the judgments; criterion: which criterion's votes.
        n_boot: bootstrap resamples of output pairs, 0..MAX_N_BOOT (0 = no CIs); seed, level: as elsewhere.
        regularization: lambda >= 0 of the optional Gaussian prior on theta (0 = maximum likelihood).
    Raises:
        InputError: no judgments for `criterion`, no vote between two different known methods, bad arguments.
    """
    check_resamples(n_boot, level)
    if not (np.isfinite(regularization) and regularization >= 0):
        raise InputError(
            f"regularization must be a finite number >= 0 (0 = maximum likelihood); got {regularization!r}"
        )
    votes = method_votes(data.votes(criterion))
    if votes.first.size == 0:
        raise InputError(
            f"no {criterion!r} vote compares outputs of two different known methods; Bradley-Terry "
            "ranks methods from such votes"
        )
    problem = _Problem.build(votes, regularization)
    observed = problem.tallies(np.ones((1, len(votes.pairs))))
    theta, eta, defined = problem.fit(observed)
    reason = None
    if not defined[0]:  # an obstacle found before fitting, else the fit itself diverged (the last reason)
        reason = OBSTACLES[int(problem.obstacle(observed)[0]) or len(OBSTACLES) - 1]
    reps_theta = reps_nu = None
    undefined = 0
    if n_boot and reason is None:
        parts = [
            problem.fit(problem.tallies(resample_counts(idx, len(votes.pairs))))
            for idx in bootstrap_index_chunks(len(votes.pairs), n_boot, seed)
        ]
        reps_theta = np.concatenate([p[0] for p in parts])
        reps_nu = np.concatenate([problem.nu(p[1]) for p in parts])
        ok = np.concatenate([p[2] for p in parts])
        reps_theta[~ok] = np.nan
        reps_nu[~ok] = np.nan
        undefined = int((~ok).sum())
    nu = float(problem.nu(eta)[0]) if reason is None else float("nan")
    values = theta[0] if reason is None else np.full(len(votes.methods), np.nan)
    strength = {
        m: estimate(values[k], None if reps_theta is None else reps_theta[:, k], level)
        for k, m in enumerate(votes.methods)
    }
    ranks = competition_ranks(values)
    return BradleyTerryFit(
        criterion,
        votes.methods,
        strength,
        dict(zip(votes.methods, ranks)),
        estimate(nu, reps_nu, level),
        float(problem.log_likelihood(observed, theta, eta)[0]) if reason is None else float("nan"),
        int(votes.first.size),
        int((votes.outcome == TIE).sum()),
        len(votes.pairs),
        votes.n_excluded,
        float(regularization),
        n_boot,
        seed,
        level,
        undefined,
        reason,
    )


@dataclass(frozen=True)
class _Problem:
    """The fixed structure of one criterion's data: method pairs (edges) and the tallies of each output pair."""

    methods: tuple[str, ...]
    edge_i: np.ndarray
    """int64 (E,): the first (lower-index) method of each compared method pair."""
    edge_j: np.ndarray
    pair_tallies: sparse.csr_matrix
    """(P, E * 3): output pair -> its votes (i wins, tie, j wins) on its method pair."""
    hessian_scatter: sparse.csr_matrix
    """(E * 9, (M + 1)^2): where each edge's 3 x 3 Hessian block (theta_i, theta_j, eta) lands."""
    regularization: float

    @classmethod
    def build(cls, votes: MethodVotes, regularization: float) -> _Problem:
        m = len(votes.methods)
        low = np.minimum(votes.first, votes.second)
        high = np.maximum(votes.first, votes.second)
        edges, edge_of_vote = np.unique(low * m + high, return_inverse=True)
        # In (low, high) orientation: a vote whose sample a belongs to the higher-index method is flipped.
        flipped = votes.first > votes.second
        outcome = np.where(flipped & (votes.outcome != TIE), B_WINS + A_WINS - votes.outcome, votes.outcome)
        pair_tallies = sparse.csr_matrix(
            (np.ones(outcome.size), (votes.pair, edge_of_vote * 3 + outcome)), shape=(len(votes.pairs), edges.size * 3)
        )
        edge_i, edge_j = edges // m, edges % m
        slots = np.stack([edge_i, edge_j, np.full(edges.size, m)], axis=1)  # (E, 3) parameter of each z entry
        flat = (slots[:, :, None] * (m + 1) + slots[:, None, :]).ravel()
        scatter = sparse.csr_matrix((np.ones(flat.size), (np.arange(flat.size), flat)), shape=(flat.size, (m + 1) ** 2))
        return cls(votes.methods, edge_i, edge_j, pair_tallies, scatter, regularization)

    def tallies(self, pair_weights: np.ndarray) -> np.ndarray:
        """(B, E, 3) vote counts per method pair from output-pair weights (B, P)."""
        return np.asarray(self.pair_tallies.T.dot(pair_weights.T).T).reshape(pair_weights.shape[0], -1, 3)

    def nu(self, eta: np.ndarray) -> np.ndarray:
        return np.where(np.isneginf(eta), 0.0, np.exp(np.where(np.isneginf(eta), 0.0, eta)))

    def obstacle(self, tallies: np.ndarray) -> np.ndarray:
        """(B,) why each resample of `tallies` (B, E, 3) has no finite estimate: an index into `OBSTACLES`
        (0 = none). Exact conditions, from the directions along which the concave likelihood never decreases:
        - no decisive vote: nu -> infinity;
        - (lambda = 0) the graph "i beat or tied j" is not strongly connected: the methods no path leads out of
          can all grow together;
        - (lambda = 0, with ties) potentials x exist with x_i - x_j >= 1 for every "i beat j" and
          |x_i - x_j| <= 1 for every tie: theta may move along x while eta grows by 1/2 per unit, forever
          raising the likelihood. Such x exist iff the difference-constraint graph has no positive cycle."""
        m = len(self.methods)
        code = np.zeros(tallies.shape[0], dtype=np.int64)
        decisive = tallies[:, :, [0, 2]].sum(axis=(1, 2)) > 0
        if self.regularization == 0:
            has_ties = tallies[:, :, 1].sum(axis=1) > 0
            drift = has_ties & ~_positive_cycle(tallies, m, self.edge_i, self.edge_j)
            code[drift] = 3
            code[~_strongly_connected(tallies, m, self.edge_i, self.edge_j)] = 2
        code[~decisive] = 1
        return code

    def log_likelihood(self, tallies: np.ndarray, theta: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """(B,) l of tallies (B, E, 3) at theta (B, M), eta (B,) (-inf = no ties)."""
        return -_Objective(self, tallies).nll(theta, eta)

    def fit(self, tallies: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fit every resample of `tallies` (B, E, 3): (theta (B, M), eta (B,) with -inf = no ties,
        defined (B,) bool)."""
        b, m = tallies.shape[0], len(self.methods)
        ties = tallies[:, :, 1].sum(axis=1)
        decisive = tallies[:, :, [0, 2]].sum(axis=(1, 2))
        has_ties = ties > 0
        defined = self.obstacle(tallies) == 0
        theta = np.zeros((b, m))
        eta = np.where(has_ties, np.log(np.where(has_ties, 2 * ties, 1.0) / np.maximum(decisive, 1.0)), -np.inf)
        if defined.any():
            t, e, converged = _Objective(self, tallies[defined]).minimize(eta[defined])
            theta[defined], eta[defined] = t, e
            defined[np.flatnonzero(defined)[~converged]] = False
        theta[~defined] = np.nan
        eta[~defined] = np.nan
        return theta, eta, defined


class _Objective:
    """Negative log-likelihood + identifiability (+ ridge) terms over a batch, with gradient and Hessian."""

    def __init__(self, problem: _Problem, tallies: np.ndarray) -> None:
        self.p = problem
        self.c = tallies
        """(B, E, 3) votes (i wins, tie, j wins) per method pair."""
        self.n = tallies.sum(axis=2)
        self.free = tallies[:, :, 1].sum(axis=1) > 0
        """(B,) whether eta is fitted (the resample has ties)."""
        self.m = len(problem.methods)
        self.tol = GRADIENT_TOL * (1.0 + self.n.sum(axis=1))

    def _parts(self, theta: np.ndarray, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ti, tj = theta[:, self.p.edge_i], theta[:, self.p.edge_j]
        free = self.free[:, None]
        z_tie = np.where(free, np.where(self.free, eta, 0.0)[:, None] + 0.5 * (ti + tj), 0.0)
        top = np.maximum(np.maximum(ti, tj), np.where(free, z_tie, -np.inf))
        ez = np.stack([np.exp(ti - top), np.exp(tj - top), np.where(free, np.exp(z_tie - top), 0.0)], axis=2)
        total = ez.sum(axis=2)
        lse = top + np.log(total)
        linear = self.c[:, :, 0] * ti + self.c[:, :, 2] * tj + self.c[:, :, 1] * z_tie
        return (self.n * lse - linear).sum(axis=1), ez / total[:, :, None], theta

    def nll(self, theta: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return self._parts(theta, np.where(np.isneginf(eta), 0.0, eta))[0]

    def value(self, x: np.ndarray) -> np.ndarray:
        theta = x[:, : self.m]
        nll = self._parts(theta, x[:, self.m])[0]
        return nll + 0.5 * theta.sum(axis=1) ** 2 + 0.5 * self.p.regularization * (theta**2).sum(axis=1)

    def derivatives(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        theta = x[:, : self.m]
        nll, prob, _ = self._parts(theta, x[:, self.m])
        f = nll + 0.5 * theta.sum(axis=1) ** 2 + 0.5 * self.p.regularization * (theta**2).sum(axis=1)
        # Outcome order in z is (i wins, j wins, tie); tallies are (i wins, tie, j wins).
        counts = self.c[:, :, [0, 2, 1]]
        resid = self.n[:, :, None] * prob - counts  # d(nll)/dz, (B, E, 3)
        b, e = resid.shape[:2]
        grad = np.zeros((b, self.m + 1))
        for k, edge in ((0, self.p.edge_i), (1, self.p.edge_j)):
            np.add.at(grad.T, edge, (resid[:, :, k] + 0.5 * resid[:, :, 2]).T)
        grad[:, self.m] = resid[:, :, 2].sum(axis=1)
        grad[:, : self.m] += theta.sum(axis=1, keepdims=True) + self.p.regularization * theta
        # d2(n log-sum-exp)/dz2 = n (diag p - p p^T), mapped to (theta_i, theta_j, eta) by z = A x.
        curvature = self.n[:, :, None, None] * (
            prob[:, :, :, None] * np.eye(3) - prob[:, :, :, None] * prob[:, :, None, :]
        )
        local = np.einsum("ab,xeac,cd->xebd", _JACOBIAN, curvature, _JACOBIAN)
        hess = np.asarray(self.p.hessian_scatter.T.dot(local.reshape(b, e * 9).T).T).reshape(b, self.m + 1, self.m + 1)
        hess[:, : self.m, : self.m] += 1.0 + self.p.regularization * np.eye(self.m)
        hess[~self.free, self.m, self.m] = 1.0  # eta is not a parameter without ties
        return f, grad, hess

    def minimize(self, eta0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Damped Newton from theta = 0, eta = eta0: (theta (B, M), eta (B,), converged (B,))."""
        x = np.zeros((eta0.size, self.m + 1))
        x[:, self.m] = np.where(self.free, eta0, 0.0)
        converged = np.zeros(eta0.size, dtype=bool)
        diverged = np.zeros(eta0.size, dtype=bool)
        for _ in range(MAX_NEWTON_STEPS):
            f, grad, hess = self.derivatives(x)
            converged = np.abs(grad).max(axis=1) <= self.tol
            active = ~(converged | diverged)
            if not active.any():
                break
            step = _solve(hess[active], grad[active])
            x[active] = _line_search(_Objective(self.p, self.c[active]), x[active], f[active], grad[active], step)
            diverged = (np.abs(x[:, : self.m]).max(axis=1) > DIVERGENCE_LIMIT) | (
                self.free & (x[:, self.m] > DIVERGENCE_LIMIT)
            )
        eta = np.where(self.free, x[:, self.m], -np.inf)
        return x[:, : self.m], eta, converged & ~diverged


_JACOBIAN = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 1.0]])
"""dz/dx for z = (theta_i, theta_j, eta + (theta_i + theta_j) / 2) and x = (theta_i, theta_j, eta)."""


def _solve(hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:  # a numerically singular Hessian: its pseudo-inverse step, one by one
        return np.stack([np.linalg.pinv(h) @ g for h, g in zip(hess, grad)])


def _line_search(objective: _Objective, x: np.ndarray, f: np.ndarray, grad: np.ndarray, step: np.ndarray) -> np.ndarray:
    """x - s * step with s halved from 1 until the objective decreases enough (Armijo, c = 1e-4)."""
    slope = (grad * step).sum(axis=1)
    scale = np.ones(x.shape[0])
    out = x.copy()
    waiting = np.ones(x.shape[0], dtype=bool)
    for _ in range(MAX_HALVINGS):
        trial = x[waiting] - scale[waiting, None] * step[waiting]
        with np.errstate(over="ignore", invalid="ignore"):
            value = _Objective(objective.p, objective.c[waiting]).value(trial)
        ok = value <= f[waiting] - 1e-4 * scale[waiting] * slope[waiting] + 1e-12 * (1.0 + np.abs(f[waiting]))
        rows = np.flatnonzero(waiting)
        out[rows[ok]] = trial[ok]
        waiting[rows[ok]] = False
        if not waiting.any():
            break
        scale[waiting] *= 0.5
    return out


def _positive_cycle(tallies: np.ndarray, m: int, edge_i: np.ndarray, edge_j: np.ndarray) -> np.ndarray:
    """(B,) bool: does the graph of constraints x_i >= x_j + 1 (i beat j) and x_i >= x_j - 1, x_j >= x_i - 1
    (i tied j) have a cycle of positive total weight? Floyd-Warshall longest paths, vectorized over resamples;
    `longest[b, j, i]` is the heaviest path j -> i, an edge j -> i of weight w standing for x_i >= x_j + w."""
    b = tallies.shape[0]
    longest = np.full((b, m, m), -np.inf)
    longest[:, np.arange(m), np.arange(m)] = 0.0
    tie = np.where(tallies[:, :, 1] > 0, -1.0, -np.inf)
    longest[:, edge_j, edge_i] = np.maximum(np.where(tallies[:, :, 0] > 0, 1.0, -np.inf), tie)
    longest[:, edge_i, edge_j] = np.maximum(np.where(tallies[:, :, 2] > 0, 1.0, -np.inf), tie)
    for k in range(m):
        longest = np.maximum(longest, longest[:, :, k : k + 1] + longest[:, k : k + 1, :])
    return (np.diagonal(longest, axis1=1, axis2=2) > 0).any(axis=1)


def _strongly_connected(tallies: np.ndarray, m: int, edge_i: np.ndarray, edge_j: np.ndarray) -> np.ndarray:
    """(B,) bool: in each resample, can every method be reached from every other along "beat or tied" edges?"""
    b = tallies.shape[0]
    reach = np.zeros((b, m, m))
    reach[:, np.arange(m), np.arange(m)] = 1.0
    reach[:, edge_i, edge_j] = np.maximum(reach[:, edge_i, edge_j], (tallies[:, :, 0] + tallies[:, :, 1] > 0))
    reach[:, edge_j, edge_i] = np.maximum(reach[:, edge_j, edge_i], (tallies[:, :, 2] + tallies[:, :, 1] > 0))
    for _ in range(int(np.ceil(np.log2(max(m, 2))))):
        reach = (reach @ reach > 0).astype(np.float64)
    return reach.all(axis=(1, 2))
