"""The record use case: the one path from scored values to the database.

The app's Save, `masc-ui batch` and the importers of judge values all record through `Recorder.record`, so
every stored value follows the same rules:
- **One transaction** per call (`storage.Store.recording`): the sample's images, the sample, its masks and
  its values are stored together or not at all, so a crash never leaves a sample without its values or a
  value without its masks.
- **The mask rule:** a value records the masks its metric used, read from the registry's `needs_masks`
  (`masks_used`): the reference masks for CP, the output mask for PF and CLIP-I-Seg, none for CLIP-I,
  CLIP-T, CLIPScore, PickScore, DINO-I and imported judge values. A sample's other masks are stored with it
  but are not part of those values' provenance, so a new mask makes only the metrics that use it stale.
- **Done once:** a (sample, metric) counts as done for a provenance key when a value with that key was stored
  computed with exactly the masks the metric uses (`Recorder.done`); batch skips what is done, and a record of
  a value that is already done adds nothing (see `storage.repo.recording`). So a value saved in the app is
  done for a later batch run, and a value computed by batch makes the app's Save of the same sample and
  masks add nothing.
- **Idempotent by content:** images by their SHA-256 (`InputImage.sha256`, the stored bytes' hash), samples by
  key or content, masks by their PNG bytes (`mask_to_png`, foreground = weight >= 0.5).
- **Videos:** a video output is stored like an image, as its file's bytes under their SHA-256 with its media type
  (`video/mp4`, `video/webm`, ...); the sample's info gets `video` (`video_info`: frame count, fps, duration, size,
  codec), which batch planning reads instead of decoding. Its mask, when one mask is reused on every frame
  (`FrameMasks` `static`), is the output slot's mask version with params `{"frame": k, "propagation": "static"}`;
  masks made per frame from the subject's name are not stored (one mask per slot): the values say how they were
  made (provenance params `out_mask_frames`). Each value's provenance params hold the sampled frames
  (`video_frames`: rule, count, T, indices).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..imaging import InputVideo
from ..metrics.sample import MetricValue, Sample
from ..metrics.value_records import json_safe
from ..metrics.video.frame_masks import FrameMasks
from ..version import code_version
from .database import Database
from .text_input import check_text_input

if TYPE_CHECKING:
    from storage import RecordInput

    from .scoring import ScoreReport

Slot = tuple[str, int]
"""An image of a sample: ("reference", i) or ("output", 0)."""
MASK_SOURCE_TO_STORE = {"drawn": "drawn", "sam": "sam", "imported": "imported", "text-prompted": "text"}
"""Mask source as the Score tab names it -> as storage names it."""
PROVENANCE_KEYS = ("model_id", "revision", "params", "code_version", "device", "dtype")


def slot_of(target: str) -> Slot:
    """The Score tab's mask target (`ref0`, `ref1`, ..., `out`) as a slot."""
    return ("output", 0) if target == "out" else ("reference", int(target[3:]))


def target_of(slot: Slot) -> str:
    """The inverse of `slot_of`."""
    return "out" if slot[0] == "output" else f"ref{slot[1]}"


def masks_used(metric: str, slots: Iterable[Slot]) -> tuple[Slot, ...]:
    """The slots among `slots` whose masks a value of `metric` depends on (the mask rule, module docstring):
    reference slots when the registry says the metric needs reference masks, the output slot when it needs
    the output mask. Metrics outside the registry (imported judges) use none."""
    from ..metrics.registry import get_spec, metric_names

    slots = list(slots)
    if not slots or metric not in metric_names():
        return ()
    needs = get_spec(metric).needs
    return tuple(
        sorted(s for s in slots if (s[0] == "reference" and needs.ref_masks) or (s[0] == "output" and needs.out_mask))
    )


@dataclass(frozen=True)
class UsedMask:
    """A mask the values of a record were computed with: one already stored (`sha256` of its PNG only), or a
    new one to store (`png`; a version is added unless the image's current mask has the same bytes)."""

    sha256: str
    png: bytes | None = None
    source: str = "drawn"
    """Where a new mask came from, as storage names it: `drawn`, `sam`, `imported` or `text`."""
    params: Mapping[str, Any] | None = None
    """How a new mask was made (e.g. the text and model of a text-prompted mask)."""

    @classmethod
    def new(
        cls, mask: np.ndarray, source: str, params: Mapping[str, Any] | None = None, *, name: str = "mask"
    ) -> UsedMask:
        """A mask array (bool, or weights binarized at >= 0.5) to store, encoded by `mask_to_png`."""
        from ..segmentation.masks import mask_to_png

        png = mask_to_png(mask, name=name)
        return cls(hashlib.sha256(png).hexdigest(), png, source, params)

    @classmethod
    def stored(cls, sha256: str) -> UsedMask:
        return cls(sha256)


@dataclass(frozen=True)
class NewSample:
    """A sample scored in the app (or anywhere its images are in memory), with where it goes."""

    sample: Sample
    dataset: str
    method: str | None = None


@dataclass(frozen=True)
class ScoredSample:
    """What `Recorder.record` takes: a sample (new, or the id of a stored one), the values computed on it and
    the masks they were computed with."""

    target: NewSample | int
    values: Sequence[MetricValue]
    masks: Mapping[Slot, UsedMask] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordResult:
    """What one `ScoredSample` added."""

    sample_id: int
    dataset: str
    new_masks: int
    new_values: int


@dataclass(frozen=True)
class Saved:
    """What the app's Save did, and the message it shows."""

    sample_id: int
    message: str
    new_masks: int
    new_values: int
    report: ScoreReport | None = None
    """The score report whose values were recorded (`Saving.save`), for the score table: nothing is scored again."""


@dataclass(frozen=True)
class PendingSave:
    """A Save checked and ready to record (`Recorder.prepare_save`): where it goes and the masks it stores."""

    target: NewSample
    masks: Mapping[Slot, UsedMask]
    sample_id: int | None
    """The stored sample it adds to (None: a new sample)."""

    @property
    def dataset(self) -> str:
        return self.target.dataset


class Recorder:
    """The record use case over one `Database`."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def record(self, items: Sequence[ScoredSample], *, user: str | None) -> list[RecordResult]:
        """Store every item in one transaction (see the module docstring); one result per item, in order.
        `user` (the acting user; None = a local process such as the CLI) is recorded as the new masks' author."""
        inputs = [self._record_input(item, user) for item in items]
        if not inputs:
            return []
        done = self._database.recording.record(inputs)
        return [RecordResult(r.sample.id, r.sample.dataset, r.new_masks, len(r.new_values)) for r in done]

    def save(
        self,
        sample: Sample,
        values: Mapping[str, MetricValue],
        *,
        user: str | None,
        dataset: str,
        method: str | None = None,
        mask_sources: Mapping[str, str] | None = None,
        sample_id: int | None = None,
    ) -> Saved:
        """Record `sample` with `values` as the app's Save does (`prepare_save`, then `record_save`)."""
        pending = self.prepare_save(
            sample, dataset=dataset, method=method, mask_sources=mask_sources, sample_id=sample_id
        )
        return self.record_save(pending, values, user=user)

    def prepare_save(
        self,
        sample: Sample,
        *,
        dataset: str,
        method: str | None = None,
        mask_sources: Mapping[str, str] | None = None,
        sample_id: int | None = None,
    ) -> PendingSave:
        """Check a Save of `sample` into `dataset` (every check, once) and encode its masks (with the Score tab's
        sources, keyed `ref0`, ..., `out`; default `drawn`); nothing is stored yet.

        `sample_id`: the stored sample on screen (opened from Browse, or saved before): its new masks become new
        mask versions and the values are added to it; no new sample is made. InputError when the prompt, subject,
        dataset or method is empty or unusable; when the images, prompt, subject, dataset or method on screen are
        not that sample's (a stored sample keeps what it was scored with: save the changed one as a new sample);
        for a mask of another size than its image (`sample_inputs.check_mask_sizes`)."""
        from .sample_inputs import check_mask_sizes

        if not sample.prompt:
            raise InputError("prompt is empty: type the prompt the output was generated from before saving")
        if not sample.subject:
            raise InputError("subject name is empty: type the subject's name (e.g. 'cat') before saving")
        if not (dataset or "").strip():
            raise InputError("dataset name is empty: type a dataset name (e.g. 'workbench') to save into")
        check_text_input(dataset, "dataset name", field="dataset")
        check_text_input(method, "method name", field="method")
        check_mask_sizes(sample)
        sources = dict(mask_sources or {})
        masks: dict[Slot, UsedMask] = {}
        slots: list[tuple[Slot, np.ndarray | FrameMasks | None]] = [
            (("reference", i), m) for i, m in enumerate(sample.ref_masks)
        ]
        for slot, mask in [*slots, (("output", 0), sample.out_mask)]:
            if mask is None:
                continue
            source = MASK_SOURCE_TO_STORE.get(sources.get(target_of(slot), "drawn"), "drawn")
            params = None
            if isinstance(mask, FrameMasks):
                if mask.method != "static":
                    continue  # one mask per frame: not storable as the slot's mask (module docstring)
                params = {**mask.params, "propagation": "static"}
                mask = mask.for_frame(0)
            elif slot[0] == "output" and sample.is_video:
                params = {"frame": 0, "propagation": "static"}
            masks[slot] = UsedMask.new(mask, source, params, name=f"mask of {target_of(slot)}")
        new = NewSample(sample, dataset.strip(), (method or "").strip() or None)
        if sample_id is not None:
            self._check_same_sample(int(sample_id), new)
        return PendingSave(new, masks, None if sample_id is None else int(sample_id))

    def record_save(
        self,
        pending: PendingSave,
        values: Mapping[str, MetricValue],
        *,
        user: str | None,
        report: ScoreReport | None = None,
    ) -> Saved:
        """Store a checked Save with every value (NaN ones with their reason), in one transaction. Saving the same
        thing again adds nothing. `report`: the score report `values` come from, handed back in `Saved`."""
        target: NewSample | int = pending.target if pending.sample_id is None else pending.sample_id
        item = ScoredSample(target, list(values.values()), pending.masks)
        result = self.record([item], user=user)[0]
        unchanged = "" if result.new_masks or result.new_values else " (nothing changed since the last save)"
        verb = "saved as" if pending.sample_id is None else "saved to"
        return Saved(
            result.sample_id,
            f"{verb} sample #{result.sample_id} in '{result.dataset}': "
            f"{result.new_masks} new mask(s), {result.new_values} new metric value(s)" + unchanged,
            result.new_masks,
            result.new_values,
            report,
        )

    def _check_same_sample(self, sample_id: int, new: NewSample) -> None:
        """InputError naming what differs when `new` is not stored sample `sample_id`."""
        stored = self._database.sample(sample_id, missing="is no longer in the database; save this one as a new sample")
        s = new.sample
        differs = [
            what
            for what, same in (
                ("reference images", tuple(r.sha256 for r in s.refs) == tuple(stored.references)),
                ("output image", s.out.sha256 == stored.output),
                ("prompt", s.prompt == stored.prompt),
                ("subject", s.subject == stored.subject),
                ("dataset", new.dataset == stored.dataset),
                ("method", new.method == stored.method),
            )
            if not same
        ]
        if differs:
            raise InputError(
                f"not saved: the {', '.join(differs)} on screen "
                f"{'differ' if len(differs) > 1 or differs[0].endswith('s') else 'differs'} "
                f"from stored sample #{sample_id}'s, "
                "and a stored sample keeps what it was scored with. Put them back, or press 'Save as a "
                "new sample' to store what is on screen as a new sample."
            )

    def done(
        self,
        metric: str,
        provenance: Mapping[str, Any],
        sample_ids: Sequence[int],
        masks: Mapping[int, Sequence[int]] | None = None,
    ) -> set[int]:
        """The samples among `sample_ids` for which `metric` is done with this provenance: a value with its
        provenance key stored, computed with exactly `masks[sample id]` (the mask version ids the metric
        uses now) where given, else with masks that are all still current."""
        from storage import provenance_key

        if not sample_ids:
            return set()
        key = provenance_key(stored_provenance(provenance))
        return self._database.metrics.scored_samples(metric, key, list(sample_ids), mask_version_ids=masks)

    def failed(self, metric: str, provenance: Mapping[str, Any], sample_ids: Sequence[int], prefix: str) -> set[int]:
        """The samples among `sample_ids` whose latest `metric` value with this provenance is a failure (NULL
        with a reason starting with `prefix`)."""
        from storage import provenance_key

        if not sample_ids:
            return set()
        key = provenance_key(stored_provenance(provenance))
        latest = self._database.metrics.latest_for(sorted(sample_ids), provenance_keys={metric: key})
        return {
            sid
            for sid, values in latest.items()
            if metric in values and values[metric].value is None and (values[metric].reason or "").startswith(prefix)
        }

    def _record_input(self, item: ScoredSample, user: str | None) -> RecordInput:
        from storage import ImageInput, MaskInput, MaskRef, RecordInput, SampleInput, ValueInput

        images: tuple[ImageInput, ...] = ()
        if isinstance(item.target, NewSample):
            s = item.target.sample
            images = tuple(ImageInput(img.data, img.media_type) for img in (*s.refs, s.out))
            target: SampleInput | int = SampleInput(
                item.target.dataset,
                subject=s.subject or "",
                references=tuple(r.sha256 for r in s.refs),
                output=s.out.sha256,
                prompt=s.prompt,
                method=item.target.method,
                info=sample_info(s) or None,
            )
        else:
            target = int(item.target)
        masks = tuple(
            MaskInput(role, pos, m.png, m.source, created_by=user, params=m.params)
            for (role, pos), m in sorted(item.masks.items())
            if m.png is not None
        )
        values = []
        for mv in item.values:
            value = None if mv.value is None or math.isnan(mv.value) else float(mv.value)
            refs = tuple(
                MaskRef(role, pos, item.masks[role, pos].sha256) for role, pos in masks_used(mv.metric, item.masks)
            )
            values.append(
                ValueInput(
                    mv.metric,
                    value,
                    stored_provenance(mv.provenance),
                    reason=(mv.reason or "not computable") if value is None else None,
                    extras=json_safe(mv.extras) if mv.extras else None,
                    masks=refs,
                )
            )
        return RecordInput(target, images=images, masks=masks, values=tuple(values))


def stored_provenance(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """A scorer's provenance dict as storage keeps it: its six keys (others dropped), JSON-clean, with this
    program's `code_version` when it has none."""
    out = {k: provenance[k] for k in PROVENANCE_KEYS if k in provenance}
    out.setdefault("code_version", code_version())
    out["params"] = json_safe(dict(out.get("params") or {}))
    clean: dict[str, Any] = json_safe(out)
    return clean


def video_info(video: InputVideo) -> dict[str, Any]:
    """What a sample's info keeps of its output video (`info["video"]`): `frame_count`, `fps`, `duration_s`,
    `width`, `height`, `codec`, `media_type`."""
    return {
        "frame_count": video.frame_count,
        "fps": video.fps,
        "duration_s": video.duration_s,
        "width": video.size[0],
        "height": video.size[1],
        "codec": video.codec,
        "media_type": video.media_type,
    }


def sample_info(sample: Sample) -> dict[str, Any]:
    """The info a new sample is stored with: `video` for a video output, `ref_labels` when given."""
    info: dict[str, Any] = {}
    if isinstance(sample.out, InputVideo):
        info["video"] = video_info(sample.out)
    if sample.ref_labels:
        info["ref_labels"] = list(sample.ref_labels)
    return info
