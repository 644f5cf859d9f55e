"""`Workbench`: one per process, the settings in force, the shared model registry and the use cases over them,
shared by every browser session (and used by the CLI). Nothing here imports gradio or storage."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..metrics.sample import Sample
from ..models.loading import pick_device, pick_dtype
from ..models.registry import ModelRegistry
from ..scratch import ScratchSpace
from ..settings import Settings
from .browse import StoredSamples
from .database import Database
from .explain import Explanation
from .masks import Segmentation
from .profile import ResolvedProfile, resolve_profile
from .ratings import RatingTasks
from .records import Recorder, Saved
from .scoring import Progress, ScoreReport, Scoring
from .status import Status, loaded_models

if TYPE_CHECKING:
    from storage import Store

    from ..imaging import InputImage


class Workbench:
    """The use cases of one process, by concern:

    - `scoring` (`Scoring`): inputs, Run (result cache), Explain (on Run's MaSC engine);
    - `segmentation` (`Segmentation`): Segment Anything clicks, segmentation by name, brush masks;
    - `recorder` (`Recorder`): the one path from scored values to the database (Save, batch, imports);
    - `ratings` (`RatingTasks`), `samples` (`StoredSamples`: browse, open, export), `database` (`Database`).

    The Score tab's calls are also methods here (`score`, `explain`, `save_sample`, ...). Every use case takes
    the acting user (`user`: the logged-in name, None for a local process such as the CLI).
    """

    def __init__(self, settings: Settings, *, profile: ResolvedProfile | None = None,
                 models: ModelRegistry | None = None, store: "Store | None" = None) -> None:
        self.profile = profile or ResolvedProfile(settings.profile, settings.profile, None)
        self.settings = settings if settings.profile == self.profile.name else settings.replace(profile=self.profile.name)
        self.models = models or ModelRegistry()
        self.device = pick_device(self.settings.device)
        self.dtype = str(pick_dtype(self.settings.dtype, self.device)).replace("torch.", "")
        self.scoring = Scoring(self.settings, self.models, self.device)
        self.segmentation = Segmentation(self.settings, self.models)
        self.database = Database(self.settings, store)
        """The database, opened on first use."""
        self.recorder = Recorder(self.database)
        self.ratings = RatingTasks(self.database, self.settings)
        self.samples = StoredSamples(self.database, self.settings)
        self.scratch = ScratchSpace()
        """Folders for files handed to the browser (exports, an opened sample's images)."""

    @classmethod
    def open(cls, settings: Settings) -> "Workbench":
        """Resolve `auto`, write the demo weights when the demo profile needs them, return the workbench."""
        from ..models.demo import write_demo_weights

        models = ModelRegistry()
        profile = resolve_profile(settings, models)
        if profile.name == "demo":
            write_demo_weights(settings.resolved_demo_weights_dir)
        return cls(settings, profile=profile, models=models)

    def close(self) -> None:
        """Close the database (pooled connections)."""
        self.database.close()

    def status(self) -> Status:
        return Status(self.profile, self.device, self.dtype, loaded_models(self.models.loaded()))

    # --- the Score tab --------------------------------------------------------------------------------------

    def load_image(self, src: object, name: str) -> "InputImage":
        """See `Scoring.load_image`."""
        return self.scoring.load_image(src, name)

    def make_sample(self, refs: Sequence[object], out: object, prompt: str | None, subject: str | None,
                    ref_masks: Sequence[np.ndarray | None] = (), out_mask: np.ndarray | None = None) -> Sample:
        """See `Scoring.make_sample`."""
        return self.scoring.make_sample(refs, out, prompt, subject, ref_masks, out_mask)

    def metric_specs(self) -> list:
        return self.scoring.metric_specs()

    def score(self, sample: Sample, names: Sequence[str] | None = None, *, user: str | None,
              progress: Progress | None = None) -> ScoreReport:
        """See `Scoring.score`."""
        return self.scoring.score(sample, names, user=user, progress=progress)

    def explain(self, sample: Sample, *, user: str | None, progress: Progress | None = None) -> Explanation:
        """See `Scoring.explain`."""
        return self.scoring.explain(sample, user=user, progress=progress)

    def save_sample(self, sample: Sample, *, user: str | None, dataset: str, method: str | None = None,
                    mask_sources: dict[str, str] | None = None, names: Sequence[str] | None = None,
                    progress: Progress | None = None, sample_id: int | None = None) -> Saved:
        """Score `sample` (from the result cache when Run already scored it) and record it with its masks and
        every value (`Recorder.save`; `sample_id`: the stored sample on screen, which Save adds to). Saving the
        same thing twice adds nothing; `score` with the same arguments afterwards returns the saved scores from
        the result cache."""
        report = self.score(sample, names, user=user, progress=progress)
        if progress:
            progress(0.9, "writing to the database")
        return self.recorder.save(sample, report.values, user=user, dataset=dataset, method=method,
                                  mask_sources=mask_sources or {}, sample_id=sample_id)

    def stored_report(self, sample_id: int, *, user: str | None) -> ScoreReport:
        """See `StoredSamples.stored_report`."""
        return self.samples.stored_report(sample_id, user=user)

    def sam_predict(self, image: "InputImage", points: list[tuple[float, float, int]],
                    box: tuple[float, float, float, float] | None, *, user: str | None) -> Any:
        """See `Segmentation.sam_predict`."""
        return self.segmentation.sam_predict(image, points, box, user=user)

    def segment_by_name(self, image: "InputImage", subject: str | None, *, user: str | None,
                        threshold: float | None = None) -> Any:
        """See `Segmentation.segment_by_name`."""
        return self.segmentation.segment_by_name(image, subject, user=user, threshold=threshold)

    def mask_from_brush(self, editor_value: object, size: tuple[int, int]) -> np.ndarray:
        """See `Segmentation.mask_from_brush`."""
        return self.segmentation.mask_from_brush(editor_value, size)
