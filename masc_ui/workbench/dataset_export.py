"""Datasets out: the export table as Parquet, and a folder the Hugging Face `datasets` library loads with
`load_dataset("imagefolder", data_dir=FOLDER)` (images, masks and one metadata row per sample).

Both hold exactly the rows and columns of the CSV/JSONL export (`storage` export table: sample fields,
`metric:<name>` latest values, `rating:<rater>:<criterion>`, `mean:<criterion>`, `n:<criterion>`), typed instead of
text: `sample_id`, `seed`, `rating:*`, `n:*` int64; `metric:*`, `mean:*` float64; `reference_sha256s` a list of
strings; `created_at` the ISO 8601 UTC text of the CSV; the rest strings; undefined values null. Values come from
the export table itself, not from CSV cells, so no spreadsheet escaping touches them.

The image folder (`write_imagefolder`):
    README.md              dataset card: where it comes from and what the columns mean
    metadata.parquet       the table above, plus the file columns the `imagefolder` loader turns into images:
                           `file_name` (output image -> feature `image`), `references_file_names` (-> `references`,
                           a list), `output_mask_file_name` (-> `output_mask`), `reference_masks_file_names`
                           (-> `reference_masks`, a list with null where a reference has no mask)
    images/<sha256>.<ext>  every output and reference image once, as stored (PNG / JPEG / WebP bytes)
    masks/<sha256>.png     every current mask once (8-bit PNG, 255 = subject)
Ratings-only samples (no images) are rows with null image columns. The folder is written next to its target and
renamed into place, so an interrupted export leaves no half folder; a non-empty target is refused.
"""

from __future__ import annotations

import json
import mimetypes
import shutil
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from storage import Store

METADATA_FILE = "metadata.parquet"
CARD_FILE = "README.md"
IMAGES_DIR = "images"
MASKS_DIR = "masks"
FILE_COLUMNS = ("file_name", "references_file_names", "output_mask_file_name", "reference_masks_file_names")
"""The metadata columns that `load_dataset("imagefolder")` loads as images (names per its `*_file_name(s)` rule)."""
MEDIA_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}
"""File name suffix of a stored image by its media type (the formats `masc_ui.imaging` keeps as uploaded)."""
_INT_COLUMNS = ("sample_id", "seed")
_INT_PREFIXES = ("rating:", "n:")
_FLOAT_PREFIXES = ("metric:", "mean:")


def arrow_table(columns: list[str], rows: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> Any:
    """A `pyarrow.Table` of the export rows with the types of the module docstring; `extra` = name -> pyarrow type
    of columns put first (the image folder's file columns)."""
    import pyarrow as pa

    fields = [pa.field(name, kind) for name, kind in (extra or {}).items()]
    fields += [pa.field(name, _column_type(name)) for name in columns]
    return pa.Table.from_pylist(rows, schema=pa.schema(fields))


def write_parquet(store: Store, target: Path, dataset: str | None) -> int:
    """The export table of `dataset` (None = all) as one Parquet file at `target`; the number of rows."""
    import pyarrow.parquet as pq

    columns, rows = store.exports.table(dataset)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    pq.write_table(arrow_table(columns, rows), partial)
    partial.replace(target)
    return len(rows)


def write_imagefolder(store: Store, folder: Path, dataset: str | None) -> int:
    """The image folder of `dataset` (None = all) at `folder` (absent or empty); the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InputError(f"export folder {folder} already exists and is not an empty folder; choose a new folder")
    columns, rows = store.exports.table(dataset)
    if rows and not any(r["output_sha256"] for r in rows):
        raise InputError(
            f"{_which(dataset)} holds only ratings-only samples (no images): there is no image to put "
            "in an image folder; export it as parquet, csv or jsonl instead"
        )
    masks = store.masks.current_for([r["sample_id"] for r in rows])
    partial = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / IMAGES_DIR).mkdir(parents=True)
    (partial / MASKS_DIR).mkdir()
    copied: dict[str, str] = {}

    def copy(sha: str | None, kind: str) -> str | None:
        if sha is None:
            return None
        if sha not in copied:
            ext = ".png" if kind == MASKS_DIR else _extension(store.images.media_type(sha))
            copied[sha] = f"{kind}/{sha}{ext}"
            (partial / copied[sha]).write_bytes(store.images.read(sha))
        return copied[sha]

    try:
        for row in rows:
            current = masks.get(row["sample_id"], {})
            mask_of = {key: rec.sha256 for key, rec in current.items()}
            row["file_name"] = copy(row["output_sha256"], IMAGES_DIR)
            row["references_file_names"] = [copy(sha, IMAGES_DIR) for sha in row["reference_sha256s"]]
            row["output_mask_file_name"] = copy(mask_of.get(("output", 0)), MASKS_DIR)
            row["reference_masks_file_names"] = [
                copy(mask_of.get(("reference", i)), MASKS_DIR) for i in range(len(row["reference_sha256s"]))
            ]
        files = {
            "file_name": pa.string(),
            "references_file_names": pa.list_(pa.string()),
            "output_mask_file_name": pa.string(),
            "reference_masks_file_names": pa.list_(pa.string()),
        }
        pq.write_table(arrow_table(columns, rows, files), partial / METADATA_FILE)
        (partial / CARD_FILE).write_text(dataset_card(dataset, columns, len(rows)), encoding="utf-8")
        if folder.exists():
            folder.rmdir()  # empty (checked above)
        partial.rename(folder)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return len(rows)


def zip_folder(folder: Path, target: Path) -> Path:
    """`folder` as a zip archive at `target` (paths inside relative to the folder's parent: one top folder)."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(Path(folder).parent))
    return target


def check_imagefolder(folder: Path) -> int:
    """The number of rows of an exported image folder, after checking that it is one: the metadata file reads,
    has the file columns, and every file it names exists inside the folder. InputError naming the problem."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    metadata = folder / METADATA_FILE
    if not metadata.is_file():
        raise InputError(
            f"{folder} is not an exported image folder: {METADATA_FILE} is missing (write one with "
            "`masc-ui export --format imagefolder -o FOLDER`)"
        )
    try:
        table = pq.read_table(metadata)
    except Exception as exc:  # pyarrow raises several types for a damaged file; all mean "not readable"
        raise InputError(f"{metadata} cannot be read as Parquet ({type(exc).__name__}: {exc})") from None
    missing_columns = [c for c in FILE_COLUMNS if c not in table.column_names]
    if missing_columns:
        raise InputError(
            f"{metadata} lacks the column(s) {missing_columns}: it was not written by MaSC Workbench's "
            "image folder export"
        )
    root = folder.resolve()
    for name in _named_files(table.select(list(FILE_COLUMNS)).to_pylist()):
        path = (folder / name).resolve()
        if root not in path.parents or not path.is_file():
            raise InputError(f"{metadata} names {name!r}, which is not a file inside {folder}; export the folder again")
    return int(table.num_rows)


def dataset_card(dataset: str | None, columns: list[str], n_rows: int) -> str:
    """The README.md of an exported image folder (YAML front matter + what each column holds)."""
    from ..version import code_version

    metrics = [c.split(":", 1)[1] for c in columns if c.startswith("metric:")]
    front = {
        "pretty_name": f"MaSC Workbench export: {dataset or 'all datasets'}",
        "tags": ["masc-workbench", "personalization", "human-ratings"],
    }
    lines = [
        "---",
        *(f"{k}: {json.dumps(v)}" for k, v in front.items()),
        "---",
        "",
        f"# {front['pretty_name']}",
        "",
        f"{n_rows} samples exported by MaSC Workbench ({code_version()}). Load with:",
        "",
        "```python",
        "from datasets import load_dataset",
        'ds = load_dataset("imagefolder", data_dir="THIS_FOLDER")["train"]   # or the Hub repo id',
        "```",
        "",
        "One row per sample: `image` (the generated output), `references` (reference images), `output_mask` and "
        "`reference_masks` (current subject masks, white = subject; null = none), the prompt and subject, "
        "`metric:<name>` (latest value of each metric, computed with the current masks; null = not computed "
        "or not computable), `rating:<rater>:<criterion>` (0-4; null = not rated, skipped or flagged), "
        "`mean:<criterion>` and `n:<criterion>` (mean over the raters and how many).",
        "",
        f"Metrics: {', '.join(metrics) or 'none'}. Their definitions: the MaSC Workbench README, section "
        "'Metrics'. Criteria: `cp` concept preservation, `pf` prompt following (`sc`, `pq`: imported "
        "ImagenHub ratings, stored x 4).",
        "",
    ]
    return "\n".join(lines)


def _column_type(name: str) -> Any:
    import pyarrow as pa

    if name in _INT_COLUMNS or name.startswith(_INT_PREFIXES):
        return pa.int64()
    if name.startswith(_FLOAT_PREFIXES):
        return pa.float64()
    if name == "reference_sha256s":
        return pa.list_(pa.string())
    return pa.string()


def _extension(media_type: str) -> str:
    return MEDIA_SUFFIXES.get(media_type) or mimetypes.guess_extension(media_type) or ".bin"


def _named_files(rows: Iterable[dict[str, Any]]) -> Iterable[str]:
    for row in rows:
        for value in row.values():
            for name in value if isinstance(value, list) else [value]:
                if name is not None:
                    yield name


def _which(dataset: str | None) -> str:
    return f"dataset {dataset!r}" if dataset else "the database"
