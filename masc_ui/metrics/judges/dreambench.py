"""The DreamBench++ judge's recipe (`yuangpeng/dreambench_plus`, `eval_concept_preservation.py` and
`eval_prompt_following.py` in the "full" setting, read, not copied): the conversation it sends, how the images are
prepared, and how the score is read from the answer. Pure functions; the scorer is `masc_ui.metrics.judges.dbpp`.

- Images: each as the scripts load it (RGB, EXIF orientation applied, transparency on white: what
  `masc_ui.imaging.open_image` gives), resized to 512 x 512 (Pillow's default filter for RGB, bicubic; the aspect
  ratio is not kept), saved as JPEG at Pillow's default quality 75, sent as `data:image/jpeg;base64,...` with
  `detail: high`.
- Concept preservation (CP): three messages, no system message: user = the CP rubric, assistant = the scripts'
  acknowledgement turn, user = [reference image, generated image] (two `image_url` parts, no text).
- Prompt following (PF): user = the PF rubric, assistant = its acknowledgement, user = [the prompt as a `text` part,
  the generated image].
- Score: `re.findall(r"(score|Score):\\s*[a-zA-Z]*\\s*(\\d+)", answer)` must find exactly one match; its number is the
  score (`parse_score`). The scripts take any such integer; we also require 0..4, the rubric's range.
- The rubric text is the benchmark's (`dreambench_prompts`, Apache-2.0), identified by `TEMPLATE_VERSION` and the
  SHA-256 of the two turns (`template_sha256`); both are in every value's provenance, as is the parse rule.

What the scripts do that we do not: on an answer without exactly one score they ask again (up to 3 times, each
call retried 10 times on errors); here one answer is asked per (image, prompt, criterion) and an answer without a
score is NaN with the answer quoted (a rerun asks again). They send `temperature=1` and a fresh random seed per
call; the API judge sends `temperature=1` unless `judge_temperature` says otherwise, and a seed only when
`judge_seed` is set.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
from dataclasses import dataclass
from typing import Any

from PIL import Image

from ...imaging import InputImage
from .dreambench_prompts import (
    CP_ASSISTANT_PROMPT,
    CP_STYLE_ASSISTANT_PROMPT,
    CP_STYLE_USER_PROMPT,
    CP_USER_PROMPT,
    PF_ASSISTANT_PROMPT,
    PF_USER_PROMPT,
)

IMAGE_SIZE = (512, 512)
"""(width, height) every image is resized to before encoding."""
JPEG_QUALITY = 75
"""Pillow's default JPEG quality, which the scripts' `image.save(buffered, format="JPEG")` uses."""
IMAGE_DETAIL = "high"
SCORE_PATTERN = r"(score|Score):\s*[a-zA-Z]*\s*(\d+)"
"""The scripts' regex; `re.findall` must find it exactly once."""
SCORE_RANGE = (0, 4)
TEMPERATURE = 1.0
"""What the scripts send to the API."""
PUBLISHED_MODEL = "gpt-4o-2024-05-13"
"""The model of DreamBench++'s published GPT ratings (the scripts' default `model_name`)."""
_SCORE = re.compile(SCORE_PATTERN)
CRITERIA = ("cp", "pf")
RUBRICS = ("subject", "style")
"""CP's two rubrics: `subject` (DreamBench++'s animal, human and object collections) and `style` (its style
collections). PF has one rubric."""


@dataclass(frozen=True)
class Template:
    """The two turns that open one criterion's conversation, and their identity."""

    criterion: str
    rubric: str
    user: str
    assistant: str
    files: tuple[str, str]
    """The repository's file names of the two turns."""

    @property
    def version(self) -> str:
        """`TEMPLATE_VERSION` with the criterion and rubric, e.g. `dreambench-plus-2024-06-24-full/cp-subject`."""
        return f"{TEMPLATE_VERSION}/{self.criterion}-{self.rubric}"

    @property
    def sha256(self) -> str:
        """SHA-256 of the user turn, a NUL byte, and the assistant turn (UTF-8)."""
        return hashlib.sha256(self.user.encode() + b"\0" + self.assistant.encode()).hexdigest()


TEMPLATE_VERSION = "dreambench-plus-2024-06-24-full"
"""The prompts of the benchmark's first (and only) release of `prompts/`, its "full" setting."""
TEMPLATES = {
    ("cp", "subject"): Template(
        "cp",
        "subject",
        CP_USER_PROMPT,
        CP_ASSISTANT_PROMPT,
        ("user_prompt_subject_full.txt", "gpt_prompt_subject_full.txt"),
    ),
    ("cp", "style"): Template(
        "cp",
        "style",
        CP_STYLE_USER_PROMPT,
        CP_STYLE_ASSISTANT_PROMPT,
        ("user_prompt_style_full.txt", "gpt_prompt_style_full.txt"),
    ),
    ("pf", "text"): Template(
        "pf", "text", PF_USER_PROMPT, PF_ASSISTANT_PROMPT, ("user_prompt_text_full.txt", "gpt_prompt_text_full.txt")
    ),
}


def template(criterion: str, rubric: str = "subject") -> Template:
    """The template of `criterion` (`cp` with rubric `subject` or `style`; `pf`, whose rubric is `text`)."""
    return TEMPLATES[(criterion, "text" if criterion == "pf" else rubric)]


def judge_jpeg(image: InputImage) -> bytes:
    """`image` as the scripts send it: resized to 512 x 512 (bicubic), JPEG at quality 75."""
    buffer = io.BytesIO()
    image.pixels.convert("RGB").resize(IMAGE_SIZE, Image.Resampling.BICUBIC).save(
        buffer, format="JPEG", quality=JPEG_QUALITY
    )
    return buffer.getvalue()


def image_part(jpeg: bytes) -> dict[str, Any]:
    """One `image_url` content part: the JPEG as a base64 data URL, `detail: high`."""
    url = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url, "detail": IMAGE_DETAIL}}


def cp_messages(reference: bytes, output: bytes, rubric: str = "subject") -> list[dict[str, Any]]:
    """The CP conversation for the reference and generated images (JPEG bytes from `judge_jpeg`)."""
    opening = template("cp", rubric)
    return [
        {"role": "user", "content": opening.user},
        {"role": "assistant", "content": opening.assistant},
        {"role": "user", "content": [image_part(reference), image_part(output)]},
    ]


def pf_messages(prompt: str, output: bytes) -> list[dict[str, Any]]:
    """The PF conversation for the generation prompt (stripped) and the generated image (JPEG bytes)."""
    opening = template("pf")
    return [
        {"role": "user", "content": opening.user},
        {"role": "assistant", "content": opening.assistant},
        {"role": "user", "content": [{"type": "text", "text": prompt.strip()}, image_part(output)]},
    ]


def parse_score(answer: str | None) -> tuple[int | None, str | None]:
    """(score, None) when `answer` holds exactly one `Score: N` (the scripts' rule) with N in 0..4; (None, reason)
    otherwise, the reason quoting the answer."""
    found = [int(number) for _, number in _SCORE.findall(answer or "")]
    if len(found) != 1:
        count = "no score" if not found else f"{len(found)} scores"
        return None, f"the judge's answer holds {count} ('Score: N' exactly once is needed): {quote(answer)}"
    lo, hi = SCORE_RANGE
    if not lo <= found[0] <= hi:
        return None, f"the judge's score {found[0]} is outside {lo}..{hi}: {quote(answer)}"
    return found[0], None


def quote(text: str | None, limit: int = 200) -> str:
    """`text` on one line, cut to `limit` characters, as a Python string literal (unprintable bytes escaped)."""
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def template_params(opening: Template) -> dict[str, Any]:
    """The provenance params that identify the rubric and the parse rule: those of the values computed here and of
    the published ratings imported with the benchmark (`masc_ui.datasets.dreambench`)."""
    return {
        "criterion": opening.criterion,
        "template_version": opening.version,
        "template_sha256": opening.sha256,
        "template_files": list(opening.files),
        "parse_rule": f'exactly one match of re.findall(r"{SCORE_PATTERN}", answer); its integer, in '
        f"{SCORE_RANGE[0]}..{SCORE_RANGE[1]}",
        "scale": "rating",
        "range": [float(SCORE_RANGE[0]), float(SCORE_RANGE[1])],
    }
