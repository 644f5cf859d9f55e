"""The Score tab's Save: check the sample and where it goes (once), keep an app without logins within its storage
cap, score the sample (from the result cache when Run already scored it) and record it with its masks and every
value through the record use case (`Recorder`). The `Saved` it returns carries the score report it recorded, so the
score table shows exactly the stored values without scoring again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import InputError
from ..metrics.sample import Sample
from ..settings import Settings
from .database import Database, StoreError
from .recorder import Recorder, Saved
from .scoring import Progress, Scoring

BYTES_PER_MIB = 1024 * 1024


class Saving:
    """Save over one process's scoring, record use case and database."""

    def __init__(self, scoring: Scoring, recorder: Recorder, database: Database, settings: Settings) -> None:
        self._scoring = scoring
        self._recorder = recorder
        self._database = database
        self._settings = settings

    def save(
        self,
        sample: Sample,
        *,
        user: str | None,
        dataset: str,
        method: str | None = None,
        mask_sources: Mapping[str, str] | None = None,
        names: Sequence[str] | None = None,
        progress: Progress | None = None,
        sample_id: int | None = None,
    ) -> Saved:
        """Score `sample` with the metrics `names` (None: all) and record it with its masks and every value
        (`Recorder.prepare_save` says what is checked; `sample_id`: the stored sample on screen, which Save adds
        to). Saving the same thing twice adds nothing. Admins only; without logins, a dataset holds at most
        `settings.anonymous_dataset_mb`. The returned `Saved.report` is the report whose values were stored."""
        self._database.accounts.require_admin(user, "saving samples")
        pending = self._recorder.prepare_save(
            sample, dataset=dataset, method=method, mask_sources=mask_sources, sample_id=sample_id
        )
        self._check_dataset_quota(sample, pending.dataset)
        report = self._scoring.score(sample, names, user=user, progress=progress)
        if progress:
            progress(0.9, "writing to the database")
        try:
            return self._recorder.record_save(pending, report.values, user=user, report=report)
        except StoreError as exc:
            raise _save_failure(exc) from exc

    def _check_dataset_quota(self, sample: Sample, dataset: str) -> None:
        """Without logins anyone reaching the app saves: InputError when the save could take `dataset` over
        `settings.anonymous_dataset_mb` (images already stored are counted again: an upper bound)."""
        if self._database.accounts.logins_enabled:
            return
        cap = self._settings.anonymous_dataset_mb * BYTES_PER_MIB
        adding = sum(len(img.data) for img in (*sample.refs, sample.out))
        have = self._database.samples.stored_bytes(dataset)
        if have + adding > cap:
            raise InputError(
                f"dataset {dataset!r} holds {have / BYTES_PER_MIB:.1f} MiB; without logins the app "
                f"stores at most {self._settings.anonymous_dataset_mb} MiB per dataset "
                "(MASC_ANONYMOUS_DATASET_MB). Save into another dataset, or configure logins."
            )


def _save_failure(exc: StoreError) -> StoreError:
    """What Save says when storing failed: a full disk by name (`storage.OutOfSpace`; the record is one
    transaction, so nothing of the Save was stored), anything else as the store said it."""
    from storage import OutOfSpace

    full = exc.__cause__
    if not isinstance(full, OutOfSpace):
        return exc
    message = (
        "no space left on the disk holding the data directory (MASC_DATA_DIR); free space and Save again — "
        "nothing was saved"
    )
    return StoreError(message, message.replace("the data directory (MASC_DATA_DIR)", full.directory))
