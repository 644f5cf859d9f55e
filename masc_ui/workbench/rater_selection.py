"""Who counts: the raters whose answers an agreement table, a leaderboard or a pairwise ranking rests on — every rater
(`all`), every rater but those the rater report marks (`unmarked`), or a list of names — and the words that say so on
screen and in every exported table (`CountedRaters.text`).

`RaterSelection.parse` reads what a person types: `all` (or nothing), `unmarked`, or names separated by commas.
`RaterSelections.resolve` turns it into the `CountedRaters` of a dataset: `unmarked` reads the marks of the rater
report (`rater_report.RaterReports`, on the criterion of the analysis; imported groups and judges are never marked,
so they stay counted), a list must name raters of the dataset."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from .database import Database

Marks = Callable[[str | None, str, str], Iterable[tuple[str, tuple[str, ...]]]]
"""(user, dataset, criterion) -> (rater, why they are marked) of every rater of the rater report (`()`: not marked)."""

SELECTIONS = ("all", "unmarked", "list")
"""Kinds of rater selection."""


@dataclass(frozen=True)
class RaterSelection:
    """Which raters count: `kind` `all`, `unmarked` (all but the marked ones) or `list` (`names`)."""

    kind: str = "all"
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in SELECTIONS:
            raise InputError(f"rater selection must be one of {', '.join(SELECTIONS)}; got {self.kind!r}")
        if self.kind == "list" and not self.names:
            raise InputError("name the raters to count, separated by commas (e.g. ann,ben), or choose all / unmarked")

    @classmethod
    def parse(cls, text: str | None) -> RaterSelection:
        """`all` (or empty), `unmarked`, or `name,name,...`."""
        cleaned = (text or "").strip()
        if cleaned.lower() in ("", "all"):
            return cls("all")
        if cleaned.lower() == "unmarked":
            return cls("unmarked")
        names = tuple(dict.fromkeys(n.strip() for n in cleaned.split(",") if n.strip()))
        return cls("list", names)


@dataclass(frozen=True)
class CountedRaters:
    """The raters an analysis counts, resolved for one dataset."""

    selection: RaterSelection
    left_out: tuple[tuple[str, str], ...] = ()
    """(rater, why) of each rater the selection leaves out (marked raters, for `unmarked`)."""

    def keeps(self, rater: str) -> bool:
        """Whether `rater`'s answers count."""
        if self.selection.kind == "list":
            return rater in self.selection.names
        return rater not in {name for name, _ in self.left_out}

    def text(self) -> str:
        """One line for screens and exported tables, e.g. `raters counted: all but the marked ones (left out: cat:
        14 identical answers in a row)`."""
        if self.selection.kind == "all":
            return "raters counted: all"
        if self.selection.kind == "list":
            return "raters counted: only " + ", ".join(self.selection.names)
        if not self.left_out:
            return "raters counted: all but the marked ones (none is marked)"
        return (
            "raters counted: all but the marked ones (left out: "
            + "; ".join(f"{name}: {why}" for name, why in self.left_out)
            + ")"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: `selection`, `names` (of a list), `left_out` ([{rater, why}])."""
        return {
            "selection": self.selection.kind,
            "names": list(self.selection.names),
            "left_out": [{"rater": name, "why": why} for name, why in self.left_out],
            "text": self.text(),
        }


EVERY_RATER = CountedRaters(RaterSelection())
"""Every rater counts (the default of every analysis)."""


class RaterSelections:
    """Resolving rater selections for a dataset, over one `Database` and the rater report."""

    def __init__(self, database: Database, marks: Marks) -> None:
        self._database = database
        self._marks = marks

    def resolve(
        self, *, user: str | None, dataset: str | None, selection: RaterSelection | None, criterion: str = "cp"
    ) -> CountedRaters:
        """The `CountedRaters` of `selection` (None = all) in `dataset` (see the module docstring). InputError when
        `unmarked` is asked without a dataset, or a list names nobody who answered in the dataset."""
        selection = selection or RaterSelection()
        if selection.kind == "all":
            return EVERY_RATER
        self._database.accounts.require_admin(user, "choosing the raters who count")
        if selection.kind == "unmarked":
            if dataset is None:
                raise InputError("leaving the marked raters out needs a dataset: the rater report is per dataset")
            marks = self._marks(user, dataset, criterion if criterion in ("cp", "pf") else "cp")
            return CountedRaters(selection, tuple((rater, "; ".join(why)) for rater, why in marks if why))
        known = {r.rater for r in self._database.ratings.current(dataset=dataset)}
        known |= {j.rater for j in self._database.pairwise.current(dataset=dataset)}
        unknown = [n for n in selection.names if n not in known]
        if unknown:
            where = f"dataset {dataset!r}" if dataset else "the database"
            raise InputError(
                f"no answers of {', '.join(repr(n) for n in unknown)} in {where}; raters with answers: "
                f"{', '.join(sorted(known)) or 'none yet'}"
            )
        return CountedRaters(selection)
