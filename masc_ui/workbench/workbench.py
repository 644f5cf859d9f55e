"""`Workbench`: one per process, the settings in force, the shared model registry and the use cases over them,
shared by every browser session (and used by the CLI). Nothing here imports gradio or storage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..metrics.sample import Sample
from ..models.loaded_models import ModelRegistry
from ..models.loading import pick_device
from ..models.precision import precision_policy
from ..scratch import ScratchSpace
from ..settings import Settings
from .browse import StoredSamples
from .compare import Comparisons
from .database import Database
from .explain import Explanation
from .masks import Segmentation
from .pairwise import PairwiseTasks
from .profile import ResolvedProfile, resolve_profile
from .ratings import RatingTasks
from .recorder import Recorder, Saved
from .scoring import Progress, ScoreReport, Scoring
from .status import Status, loaded_models, persistence_warning
from .text_input import check_text_input
from .users import Accounts
from .video import FrameSeries, VideoViews

if TYPE_CHECKING:
    from storage import Store

    from ..imaging import InputImage, InputVideo, VideoFrame
    from ..metrics.video.frame_masks import FrameMasks
    from .catalogue_explain import CatalogueExplanations


class Workbench:
    """The use cases of one process, by concern:

    - `scoring` (`Scoring`): inputs, Run (result cache), Explain (on Run's MaSC engine);
    - `segmentation` (`Segmentation`): Segment Anything clicks, segmentation by name, brush masks;
    - `recorder` (`Recorder`): the one path from scored values to the database (Save, batch, imports);
    - `ratings` (`RatingTasks`), `pairwise` (`PairwiseTasks`: pairwise rating tasks), `samples` (`StoredSamples`:
      browse, open, export), `compare` (`Comparisons`: two stored outputs of one reference side by side, for
      admins), `database` (`Database`).

    The Score tab's calls are also methods here (`score`, `explain`, `save_sample`, ...). Every use case takes
    the acting user (`user`: the logged-in name, None for a local process such as the CLI).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        profile: ResolvedProfile | None = None,
        models: ModelRegistry | None = None,
        store: Store | None = None,
        accounts: Accounts | None = None,
    ) -> None:
        self.profile = profile or ResolvedProfile(settings.profile, settings.profile, None)
        self.settings = (
            settings if settings.profile == self.profile.name else settings.replace(profile=self.profile.name)
        )
        self.models = models or ModelRegistry()
        self.device = pick_device(self.settings.device)
        self.precision = precision_policy(self.settings.dtype, self.device)
        """The precision policy's choice for this device (dtype and why)."""
        self.dtype = self.precision.name
        self.scoring = Scoring(self.settings, self.models, self.device)
        self.segmentation = Segmentation(self.settings, self.models)
        self.accounts = accounts if accounts is not None else Accounts.from_settings(self.settings)
        """Logins and roles (`users.Accounts`); every use case below applies them."""
        self.database = Database(self.settings, store, accounts=self.accounts)
        """The database, opened on first use."""
        self.recorder = Recorder(self.database)
        self.scratch = ScratchSpace()
        """Folders for files handed to the browser (exports, an opened sample's images, rating task images)."""
        self.ratings = RatingTasks(self.database, self.settings, self.scratch.root / "task-images")
        self.pairwise = PairwiseTasks(self.database, self.settings, self.scratch.root / "pair-files")
        self.samples = StoredSamples(self.database, self.settings)
        self.videos = VideoViews(self.settings)
        """Video outputs: frame strip, per-frame series, a frame as an image sample, poster frames."""
        self.compare = Comparisons(self.database, self.samples, self.scoring)
        self.storage_warning = persistence_warning(self.settings)
        """On a Space that would lose its data on restart, the storage banner's text (checked once, at start)."""

    @classmethod
    def open(cls, settings: Settings) -> Workbench:
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
        return Status(
            self.profile,
            self.device,
            self.dtype,
            loaded_models(self.models.loaded()),
            dtype_reason=self.precision.reason,
            storage_warning=self.storage_warning,
        )

    # --- the Score tab --------------------------------------------------------------------------------------

    def load_image(self, src: object, name: str) -> InputImage:
        """See `Scoring.load_image`."""
        return self.scoring.load_image(src, name)

    def load_output(self, src: object, name: str = "output") -> InputImage | InputVideo:
        """See `Scoring.load_output` (an image or a video)."""
        return self.scoring.load_output(src, name)

    def make_sample(
        self,
        refs: Sequence[object],
        out: object,
        prompt: str | None,
        subject: str | None,
        ref_masks: Sequence[np.ndarray | None] = (),
        out_mask: np.ndarray | FrameMasks | None = None,
        *,
        out_mask_frame: int = 0,
        ref_labels: Sequence[str | None] = (),
    ) -> Sample:
        """See `Scoring.make_sample` (the output may be a video)."""
        return self.scoring.make_sample(
            refs, out, prompt, subject, ref_masks, out_mask, out_mask_frame=out_mask_frame, ref_labels=ref_labels
        )

    def metric_specs(self, sample: Sample | None = None) -> list:
        """See `Scoring.metric_specs`."""
        return self.scoring.metric_specs(sample)

    def score(
        self, sample: Sample, names: Sequence[str] | None = None, *, user: str | None, progress: Progress | None = None
    ) -> ScoreReport:
        """See `Scoring.score`. Admins only."""
        self.accounts.require_admin(user, "scoring")
        return self.scoring.score(sample, names, user=user, progress=progress)

    def explain(self, sample: Sample, *, user: str | None, progress: Progress | None = None) -> Explanation:
        """See `Scoring.explain`. Admins only."""
        self.accounts.require_admin(user, "explaining scores")
        return self.scoring.explain(sample, user=user, progress=progress)

    def explain_catalogue(
        self, sample: Sample, names: Sequence[str] | None, *, user: str | None, progress: Progress | None = None
    ) -> CatalogueExplanations:
        """See `catalogue_explain.explain_catalogue` (VQAScore, ITMScore, FaceSim, FaceScore). Admins only."""
        from .catalogue_explain import explain_catalogue

        self.accounts.require_admin(user, "explaining scores")
        return explain_catalogue(self.scoring, sample, names, user=user, progress=progress)

    def save_sample(
        self,
        sample: Sample,
        *,
        user: str | None,
        dataset: str,
        method: str | None = None,
        mask_sources: dict[str, str] | None = None,
        names: Sequence[str] | None = None,
        progress: Progress | None = None,
        sample_id: int | None = None,
    ) -> Saved:
        """Score `sample` (from the result cache when Run already scored it) and record it with its masks and
        every value (`Recorder.save`; `sample_id`: the stored sample on screen, which Save adds to). Saving the
        same thing twice adds nothing; `score` with the same arguments afterwards returns the saved scores from
        the result cache. Admins only; without logins, a dataset holds at most `settings.anonymous_dataset_mb`."""
        self.accounts.require_admin(user, "saving samples")
        check_text_input(dataset, "dataset name", field="dataset")
        self._check_dataset_quota(sample, dataset)
        report = self.score(sample, names, user=user, progress=progress)
        if progress:
            progress(0.9, "writing to the database")
        return self.recorder.save(
            sample,
            report.values,
            user=user,
            dataset=dataset,
            method=method,
            mask_sources=mask_sources or {},
            sample_id=sample_id,
        )

    # --- video outputs -------------------------------------------------------------------------------------------

    def sampled_frames(self, video: InputVideo) -> list[VideoFrame]:
        """See `VideoViews.sampled_frames` (the frame strip)."""
        return self.videos.sampled_frames(video)

    def frame_series(self, report: ScoreReport, video: InputVideo) -> list[FrameSeries]:
        """Per-frame values of every metric of a video's score report (for a line plot; `FrameSeries.rows`)."""
        return self.videos.frame_series(report.values, video)

    def explain_frame(
        self, sample: Sample, frame_index: int, *, user: str | None, progress: Progress | None = None
    ) -> Explanation:
        """See `Scoring.explain_frame` (MaSC overlays of one frame of a video sample). Admins only."""
        self.accounts.require_admin(user, "explaining scores")
        return self.scoring.explain_frame(sample, frame_index, user=user, progress=progress)

    def segment_frames_by_name(self, video: InputVideo, subject: str | None, *, user: str | None) -> FrameMasks:
        """See `Segmentation.segment_frames_by_name` (a mask per sampled frame from the subject's name). Admins only."""
        self.accounts.require_admin(user, "segmenting")
        return self.segmentation.segment_frames_by_name(video, subject, user=user)

    def poster(self, output: InputImage | InputVideo) -> InputImage:
        """See `VideoViews.poster`."""
        return self.videos.poster(output)

    def stored_report(self, sample_id: int, *, user: str | None) -> ScoreReport:
        """See `StoredSamples.stored_report`."""
        return self.samples.stored_report(sample_id, user=user)

    def sam_predict(
        self,
        image: InputImage,
        points: list[tuple[float, float, int]],
        box: tuple[float, float, float, float] | None,
        *,
        user: str | None,
    ) -> Any:
        """See `Segmentation.sam_predict`. Admins only."""
        self.accounts.require_admin(user, "segmenting")
        return self.segmentation.sam_predict(image, points, box, user=user)

    def segment_by_name(
        self, image: InputImage, subject: str | None, *, user: str | None, threshold: float | None = None
    ) -> Any:
        """See `Segmentation.segment_by_name`. Admins only."""
        self.accounts.require_admin(user, "segmenting")
        return self.segmentation.segment_by_name(image, subject, user=user, threshold=threshold)

    def mask_from_brush(self, editor_value: object, size: tuple[int, int]) -> np.ndarray:
        """See `Segmentation.mask_from_brush`."""
        return self.segmentation.mask_from_brush(editor_value, size)

    def _check_dataset_quota(self, sample: Sample, dataset: str) -> None:
        """Without logins anyone reaching the app saves: InputError when the save could take `dataset` over
        `settings.anonymous_dataset_mb` (images already stored are counted again: an upper bound)."""
        if self.accounts.logins_enabled or not (dataset or "").strip():
            return
        cap = self.settings.anonymous_dataset_mb * 1024 * 1024
        adding = sum(len(img.data) for img in (*sample.refs, sample.out))
        have = self.database.run(lambda store: store.samples.stored_bytes(dataset.strip()))
        if have + adding > cap:
            raise InputError(
                f"dataset {dataset.strip()!r} holds {have / 2**20:.1f} MiB; without logins the app "
                f"stores at most {self.settings.anonymous_dataset_mb} MiB per dataset "
                "(MASC_ANONYMOUS_DATASET_MB). Save into another dataset, or configure logins."
            )
