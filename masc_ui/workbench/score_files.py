"""What `masc-ui score` is given (image, video and mask files, prompt, subject, metric names), and the checks that
need no model: run before anything heavy is imported (`check`), and before the profile is decided (`open`: the files
decoded and checked), so a missing flag or a bad file is said at once.

Which metric needs which input is read from the registry's declarations (`MetricSpec.needs`), and the error names
the flag each metric lacks: CP needs `--ref-mask`, PF needs `--out-mask` and `--prompt`, CLIP-T `--prompt`, ...
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..settings import Settings

if TYPE_CHECKING:
    from ..metrics.base import Needs
    from ..metrics.sample import Sample

INPUT_FLAGS = {"ref_masks": "--ref-mask", "out_mask": "--out-mask", "prompt": "--prompt"}
"""`Needs.missing` names -> the flag of `masc-ui score` that gives that input."""
DEFAULT_METRICS = "cp,pf"


@dataclass(frozen=True)
class ScoreFiles:
    """One output scored against its references from files (`Scoring.score_files`)."""

    refs: tuple[Path, ...]
    out: Path
    """The output: an image or a video file."""
    ref_masks: tuple[Path, ...] = ()
    """One mask file per reference, same order (or none)."""
    out_mask: Path | None = None
    out_mask_frame: int = 0
    """Video output: the frame `out_mask` was drawn on (it is reused on every frame)."""
    prompt: str | None = None
    subject: str | None = None
    """The subject's name, stripped from the prompt for PF."""
    ref_labels: tuple[str, ...] = ()
    """Class label of each reference (NexusScore), same order (or none)."""
    metrics: str = DEFAULT_METRICS
    """`all`, or comma-separated metric names."""
    mask_shifts: str | None = None
    """`--mask-sensitivity`: comma-separated pixel shifts (e.g. `3` or `2,5`), None = no mask-sensitivity check."""

    @property
    def shifts(self) -> tuple[int, ...]:
        """The pixel shifts of the mask-sensitivity check (empty = none asked); InputError for a bad list."""
        if self.mask_shifts is None:
            return ()
        return parse_shifts(self.mask_shifts)

    @property
    def masc_only(self) -> bool:
        """The default: MaSC CP and PF with every diagnostic."""
        from ..metrics.registry import parse_metric_names

        return parse_metric_names(self.metrics, media=None) == ["cp", "pf"]

    def check(self) -> list[str]:
        """The metric names asked (`all`: every image metric, the part of `all` known before the output is opened),
        after checking that the flags give each of them what it needs and that the counts of masks and labels match
        the references; InputError naming the flags otherwise. Loads no model and opens no file."""
        from ..metrics.registry import get_spec, parse_metric_names

        if self.ref_masks and len(self.ref_masks) != len(self.refs):
            raise InputError(
                f"{len(self.refs)} --ref image(s) but {len(self.ref_masks)} --ref-mask file(s): "
                "give one mask per reference, in the same order"
            )
        if self.ref_labels and len(self.ref_labels) != len(self.refs):
            raise InputError(
                f"{len(self.refs)} --ref image(s) but {len(self.ref_labels)} --label(s): give one label per reference, "
                "in the same order"
            )
        names = parse_metric_names(self.metrics, media=None)
        self.shifts  # noqa: B018 (checks the list)
        if self.prompt is not None and not self.prompt.strip() and any(get_spec(n).needs.prompt for n in names):
            raise InputError("--prompt is empty: give the prompt the output was generated from")
        given = {
            "ref_masks": bool(self.ref_masks),
            "out_mask": self.out_mask is not None,
            "prompt": bool((self.prompt or "").strip()),
        }
        lacking = {n: flags for n in names if (flags := _lacking_flags(get_spec(n).needs, given))}
        if lacking:
            raise InputError(
                "; ".join(f"{name} needs {' and '.join(flags)}" for name, flags in lacking.items())
                + ": give "
                + ("it" if len({f for flags in lacking.values() for f in flags}) == 1 else "them")
                + ", or choose other --metrics (`masc-ui metrics` lists what each metric needs)"
            )
        return names

    def open(self, settings: Settings) -> Sample:
        """The sample of these files (`check` first), each file named by its flag in errors. The output may be a
        video: its mask file (drawn on frame `out_mask_frame`) is then reused on every frame. An image too small to
        judge, or a mask of another size than its image, is refused (`sample_inputs`). Loads no model."""
        from ..imaging import VideoLimits, load_mask_file, open_image, open_media
        from ..metrics.sample import Sample
        from .sample_inputs import check_judgeable, check_mask_sizes, judgeable, output_mask
        from .text_input import check_text_input

        check_text_input(self.prompt, "--prompt", field="prompt")
        check_text_input(self.subject, "--object", field="subject")
        self.check()
        limit = settings.max_image_pixels
        output = judgeable(
            open_media(self.out, name=f"--out {self.out}", max_pixels=limit, limits=VideoLimits.from_settings(settings))
        )
        out_mask = (
            None
            if self.out_mask is None
            else load_mask_file(self.out_mask, name=f"--out-mask {self.out_mask}", max_pixels=limit)
        )
        sample = Sample(
            refs=tuple(check_judgeable(open_image(r, name=f"--ref {r}", max_pixels=limit)) for r in self.refs),
            out=output,
            prompt=self.prompt,
            subject=self.subject,
            ref_masks=tuple(load_mask_file(m, name=f"--ref-mask {m}", max_pixels=limit) for m in self.ref_masks),
            out_mask=output_mask(output, out_mask, self.out_mask_frame, f"--out-mask {self.out_mask}"),
            ref_labels=tuple(self.ref_labels),
        )
        flags = [f"--ref-mask {m}" for m in self.ref_masks] or [f"mask {i + 1}" for i in range(len(self.refs))]
        return check_mask_sizes(sample, [*flags, f"--out-mask {self.out_mask}"])


def _lacking_flags(needs: Needs, given: dict[str, bool]) -> list[str]:
    """The flags of the inputs `needs` asks for that were not given."""
    return [flag for name, flag in INPUT_FLAGS.items() if getattr(needs, name) and not given[name]]


def parse_shifts(text: str, what: str = "--mask-sensitivity") -> tuple[int, ...]:
    """`3` or `2,5`: whole pixel shifts from 0 to `MAX_SHIFT_PX`; InputError naming `what` (the flag or the field the
    text came from) otherwise."""
    from ..imaging.mask_morphology import MAX_SHIFT_PX

    try:
        shifts = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        shifts = ()
    if not shifts or any(not 0 <= px <= MAX_SHIFT_PX for px in shifts):
        raise InputError(f"{what} {text!r}: give whole pixel counts from 0 to {MAX_SHIFT_PX}, such as 3 or 2,5")
    return shifts
