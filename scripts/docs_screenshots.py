"""Copy the documentation's screenshots from the browser tests' artifacts into docs/img/, cropped, scaled and
compressed (WebP, each at most --max-kb).

The browser tests write full-page screenshots to test-artifacts/e2e/ (`tests/e2e/conftest.py`, fixture `shots`;
`tests/e2e/test_layout.py`). To refresh the pictures after a change to the app:

    python -m pytest tests/e2e/test_researcher_journey.py tests/e2e/test_rater_journey.py \
        tests/e2e/test_pair_rating.py tests/e2e/test_admin_views.py tests/e2e/test_layout.py -q
    python scripts/docs_screenshots.py

then look at each picture before committing it.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
DOCS_IMG = ROOT / "docs" / "img"

SHOTS = {
    "score.webp": ("test_score_tab_one_sample_at_a_time-01-ran-and-explained.png", (80, 2150, 1320, 3830)),
    "score-inputs.webp": ("test_score_tab_one_sample_at_a_time-01-ran-and-explained.png", (0, 0, 1400, 1720)),
    "browse.webp": ("test_admin_marks_a_dataset_for_rating_in_browse-01-marked.png", None),
    "compare.webp": ("test_admin_opens_leaderboard_compare_and_pairwise_results-03-compare.png", (0, 0, 1400, 1500)),
    "agreement.webp": ("layout-1400x1000-agreement.png", (0, 0, 1400, 1640)),
    "agreement-pairwise.webp": (
        "test_admin_opens_leaderboard_compare_and_pairwise_results-05-pairwise.png",
        (0, 0, 1400, 1340),
    ),
    "leaderboard.webp": (
        "test_admin_opens_leaderboard_compare_and_pairwise_results-01-leaderboard.png",
        (0, 0, 1400, 1460),
    ),
    "rate.webp": ("test_raters_get_marked_datasets_and_never_lose_an_answer-01-first-task-800x900.png", None),
    "rate-pairs.webp": ("test_judge_pairs_by_keyboard_go_back_and_change_one-01-first-pair.png", (0, 0, 1400, 1100)),
}
"""docs/img file -> (screenshot in test-artifacts/e2e, crop box (left, top, right, bottom) in its pixels or None)."""
MAX_WIDTH = 1100
"""Widest picture written, in pixels (the site's content column is narrower; wider only costs bytes)."""


def encode(image: Image.Image, max_bytes: int) -> bytes:
    """WebP bytes of `image`, at the best quality (and then the largest size) that fits in `max_bytes`."""
    image = image.convert("RGB")
    if image.width > MAX_WIDTH:
        image = image.resize((MAX_WIDTH, round(image.height * MAX_WIDTH / image.width)), Image.LANCZOS)
    while True:
        for quality in (85, 78, 70, 62, 55):
            buffer = io.BytesIO()
            image.save(buffer, "WEBP", quality=quality, method=6)
            if buffer.tell() <= max_bytes:
                return buffer.getvalue()
        image = image.resize((round(image.width * 0.85), round(image.height * 0.85)), Image.LANCZOS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", type=Path, default=ARTIFACTS, help="folder of the browser tests' screenshots")
    parser.add_argument("--out", type=Path, default=DOCS_IMG, help="folder of the docs' pictures")
    parser.add_argument("--max-kb", type=int, default=150, help="largest file written, in KiB")
    args = parser.parse_args(argv)
    missing = [source for source, _ in SHOTS.values() if not (args.artifacts / source).is_file()]
    if missing:
        print(
            f"error: not in {args.artifacts}: {', '.join(sorted(set(missing)))}; run the browser tests named in "
            "this script's docstring first",
            file=sys.stderr,
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (source, box) in SHOTS.items():
        image = Image.open(args.artifacts / source)
        if box is not None:
            image = image.crop(box)
        data = encode(image, args.max_kb * 1024)
        (args.out / name).write_bytes(data)
        print(f"{name}\t{len(data) // 1024} KiB\tfrom {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
