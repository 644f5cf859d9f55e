"""`Workbench`: the use cases of one process, shared by every browser session of the app, the CLI and batch scoring.
`factory.build_workbench` makes it (the one composition root); nothing here imports gradio or storage.

It is a container: the settings in force (with the profile resolved), the pieces every use case shares (the model
registry, the logins, the database) and one attribute per use case. Callers use the use cases themselves
(`wb.scoring.score(...)`, `wb.samples.open(...)`, `wb.ratings.submit(...)`), each of which checks the acting user's
role. A use case is built the first time it is used, from the shared pieces, by the recipe next to its name below;
so a command that only reads the database (`masc-ui db check`) never imports torch, and two threads asking at once
get the same object.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar, overload

from ..models.loaded_models import ModelRegistry
from ..settings import Settings
from .database import Database
from .profile import ResolvedProfile
from .status import Status, loaded_models, persistence_warning
from .users import Accounts

if TYPE_CHECKING:
    from ..models.precision import Precision
    from ..scratch import ScratchSpace
    from .agreement import Agreement
    from .batch import BatchScoring
    from .browse import StoredSamples
    from .compare import Comparisons
    from .gold import GoldTasks
    from .imports import Imports
    from .leaderboard import Leaderboards
    from .mask_sensitivity import MaskSensitivity
    from .masks import Segmentation
    from .pair_gold import PairGoldTasks
    from .pairwise import PairwiseTasks
    from .pairwise_analysis import PairwiseAnalysis
    from .practice import PracticeRounds
    from .rater_report import RaterReports
    from .rater_selection import RaterSelections
    from .rating_guide import RatingGuides
    from .ratings import RatingTasks
    from .recorder import Recorder
    from .saving import Saving
    from .scoring import Scoring
    from .studies import Studies
    from .video import VideoViews

T = TypeVar("T")


class UnresolvedProfile(RuntimeError):
    """A use case that loads models was asked of a workbench built with `resolve=False` on the `auto` profile (a
    programming error: build it with `resolve=True`, or name a profile)."""


class _BuiltOnce(Generic[T]):
    """A workbench attribute made on first use by `make(workbench)`, once (under the workbench's lock), then kept
    on the instance (so later reads are plain attribute reads, and a test may replace it)."""

    def __init__(self, make: Callable[[Workbench], T]) -> None:
        self._make = make
        self._name = make.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, wb: None, owner: type) -> _BuiltOnce[T]: ...

    @overload
    def __get__(self, wb: Workbench, owner: type) -> T: ...

    def __get__(self, wb: Workbench | None, owner: type) -> _BuiltOnce[T] | T:
        if wb is None:
            return self
        with wb._building:
            if self._name not in wb.__dict__:
                wb.__dict__[self._name] = self._make(wb)
        found: T = wb.__dict__[self._name]
        return found


def _model_settings(wb: Workbench) -> Settings:
    """The settings a use case that loads models runs on: the workbench's, whose profile must be resolved."""
    if wb.settings.profile == "auto":
        raise UnresolvedProfile(
            "this workbench was built with resolve=False and the profile is still 'auto': its use cases that load "
            "models need build_workbench(settings) (resolve=True) or a named profile"
        )
    return wb.settings


def _device(wb: Workbench) -> str:
    from ..models.loading import pick_device

    return pick_device(wb.settings.device)


def _precision(wb: Workbench) -> Precision:
    from ..models.precision import precision_policy

    return precision_policy(wb.settings.dtype, wb.device)


def _scratch(wb: Workbench) -> ScratchSpace:
    from ..scratch import ScratchSpace

    return ScratchSpace()


def _scoring(wb: Workbench) -> Scoring:
    from .scoring import Scoring

    return Scoring(_model_settings(wb), wb.models, wb.device, wb.accounts)


def _segmentation(wb: Workbench) -> Segmentation:
    from .masks import Segmentation

    return Segmentation(_model_settings(wb), wb.models, wb.accounts)


def _mask_sensitivity(wb: Workbench) -> MaskSensitivity:
    from .mask_sensitivity import MaskSensitivity

    return MaskSensitivity(_model_settings(wb), wb.models, wb.segmentation, wb.accounts)


def _videos(wb: Workbench) -> VideoViews:
    from .video import VideoViews

    return VideoViews(wb.settings)


def _recorder(wb: Workbench) -> Recorder:
    from .recorder import Recorder

    return Recorder(wb.database)


def _saving(wb: Workbench) -> Saving:
    from .saving import Saving

    return Saving(wb.scoring, wb.recorder, wb.database, wb.settings)


def _samples(wb: Workbench) -> StoredSamples:
    from .browse import StoredSamples

    return StoredSamples(wb.database, wb.settings)


def _compare(wb: Workbench) -> Comparisons:
    from .compare import Comparisons

    return Comparisons(wb.database, wb.samples, wb.scoring)


def _ratings(wb: Workbench) -> RatingTasks:
    from .ratings import RatingTasks

    return RatingTasks(wb.database, wb.settings, wb.scratch.root / "task-images", studies=wb.studies)


def _studies(wb: Workbench) -> Studies:
    from .studies import Studies

    return Studies(wb.database)


def _pairwise(wb: Workbench) -> PairwiseTasks:
    from .pairwise import PairwiseTasks

    return PairwiseTasks(wb.database, wb.settings, wb.scratch.root / "pair-files")


def _agreement(wb: Workbench) -> Agreement:
    from .agreement import Agreement

    return Agreement(wb.database, lambda: wb.rater_selection)


def _pairwise_analysis(wb: Workbench) -> PairwiseAnalysis:
    from .pairwise_analysis import PairwiseAnalysis

    return PairwiseAnalysis(wb.database, lambda: wb.rater_selection)


def _leaderboard(wb: Workbench) -> Leaderboards:
    from .leaderboard import Leaderboards

    return Leaderboards(wb.agreement, wb.pairwise_analysis)


def _gold(wb: Workbench) -> GoldTasks:
    from .gold import GoldTasks

    return GoldTasks(wb.database)


def _pair_gold(wb: Workbench) -> PairGoldTasks:
    from .pair_gold import PairGoldTasks

    return PairGoldTasks(wb.database)


def _guides(wb: Workbench) -> RatingGuides:
    from .rating_guide import RatingGuides

    return RatingGuides(wb.database, wb.ratings, wb.gold)


def _practice(wb: Workbench) -> PracticeRounds:
    from .practice import PracticeRounds

    return PracticeRounds(wb.database, wb.ratings, wb.guides)


def _rater_report(wb: Workbench) -> RaterReports:
    from .rater_report import RaterReports

    return RaterReports(wb.database, wb.settings, wb.gold, wb.agreement, wb.pair_gold)


def _rater_selection(wb: Workbench) -> RaterSelections:
    from .rater_selection import RaterSelections

    def marks(user: str | None, dataset: str, criterion: str) -> list[tuple[str, tuple[str, ...]]]:
        report = wb.rater_report.report(user=user, dataset=dataset, criterion=criterion, n_boot=0)
        return [(q.rater, q.marks) for q in report.rows]

    return RaterSelections(wb.database, marks)


def _imports(wb: Workbench) -> Imports:
    from .imports import Imports

    return Imports(wb.database, wb.settings)


def _batch(wb: Workbench) -> BatchScoring:
    from .batch import BatchScoring

    return BatchScoring(wb.database, wb.recorder, _model_settings(wb), wb.models)


class Workbench:
    """The use cases of one process, by concern (each takes the acting `user`: the logged-in name, None for a local
    process such as the CLI, which acts as admin):

    - `scoring` (`Scoring`): inputs, Run (result cache), Explain, the catalogue explanations, `masc-ui score`;
    - `segmentation` (`Segmentation`): Segment Anything clicks, segmentation by name, brush masks, `masc-ui segment`;
    - `mask_sensitivity` (`MaskSensitivity`): the mask-dependent metrics rescored on eroded, dilated and other masks;
    - `videos` (`VideoViews`): a video output's frame strip, per-frame series, poster frame;
    - `recorder` (`Recorder`): the one path from scored values to the database (Save, batch, imports);
    - `saving` (`Saving`): the Score tab's Save (validate, score once, record; the report it recorded);
    - `samples` (`StoredSamples`: browse, open, export), `compare` (`Comparisons`: two stored outputs of one
      reference side by side);
    - `ratings` (`RatingTasks`), `pairwise` (`PairwiseTasks`: pairwise rating tasks);
    - `studies` (`Studies`: crowd studies, their secret links and participants);
    - `gold` (`GoldTasks`: gold tasks and attention checks, raters' accuracy on them), `pair_gold` (`PairGoldTasks`:
      the same for pairs), `rater_report`
      (`RaterReports`: who to trust and why), `rater_selection` (`RaterSelections`: who counts in an analysis);
    - `guides` (`RatingGuides`: each dataset's rating guide and examples, what a rater reads before rating),
      `practice` (`PracticeRounds`: the practice round with its feedback);
    - `agreement` (`Agreement`), `leaderboard` (`Leaderboards`), `pairwise_analysis` (`PairwiseAnalysis`);
    - `imports` (`Imports`: `masc-ui import`), `batch` (`BatchScoring`: `masc-ui batch`);
    - `database` (`Database`: the store and its upkeep), `accounts` (`Accounts`: logins and roles), `models` (the
      shared `ModelRegistry`), `scratch` (folders for files handed to the browser).
    """

    def __init__(
        self,
        settings: Settings,
        profile: ResolvedProfile,
        models: ModelRegistry,
        accounts: Accounts,
        database: Database,
    ) -> None:
        self.settings = settings
        """The settings in force; `settings.profile` is the profile in use (`profile.name`)."""
        self.profile = profile
        """Which profile is in use and why (`auto` resolved by `factory.build_workbench`)."""
        self.models = models
        self.accounts = accounts
        """Logins and roles (`users.Accounts`); every use case applies them."""
        self.database = database
        """The database, opened on first use."""
        self.storage_warning = persistence_warning(settings)
        """On a Space that would lose its data on restart, the storage banner's text (checked once, at start)."""
        self._building = threading.RLock()

    device = _BuiltOnce(_device)
    """The device the models run on (`settings.device`, `auto` resolved)."""
    precision = _BuiltOnce(_precision)
    """The precision policy's choice for this device (dtype and why)."""
    scratch = _BuiltOnce(_scratch)
    scoring = _BuiltOnce(_scoring)
    segmentation = _BuiltOnce(_segmentation)
    mask_sensitivity = _BuiltOnce(_mask_sensitivity)
    videos = _BuiltOnce(_videos)
    recorder = _BuiltOnce(_recorder)
    saving = _BuiltOnce(_saving)
    samples = _BuiltOnce(_samples)
    compare = _BuiltOnce(_compare)
    ratings = _BuiltOnce(_ratings)
    pairwise = _BuiltOnce(_pairwise)
    agreement = _BuiltOnce(_agreement)
    pairwise_analysis = _BuiltOnce(_pairwise_analysis)
    leaderboard = _BuiltOnce(_leaderboard)
    gold = _BuiltOnce(_gold)
    pair_gold = _BuiltOnce(_pair_gold)
    studies = _BuiltOnce(_studies)
    guides = _BuiltOnce(_guides)
    practice = _BuiltOnce(_practice)
    rater_report = _BuiltOnce(_rater_report)
    rater_selection = _BuiltOnce(_rater_selection)
    imports = _BuiltOnce(_imports)
    batch = _BuiltOnce(_batch)

    @property
    def dtype(self) -> str:
        return self.precision.name

    def status(self) -> Status:
        """What the status line shows now (the models loaded so far included)."""
        return Status(
            self.profile,
            self.device,
            self.dtype,
            loaded_models(self.models.loaded()),
            dtype_reason=self.precision.reason,
            storage_warning=self.storage_warning,
        )

    def close(self) -> None:
        """Close the database (pooled connections)."""
        self.database.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
