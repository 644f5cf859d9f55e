"""Importers of benchmark layouts (manifest, DreamBench++, DreamBooth, ImagenHub ratings) and exports.

`list_importers()` names them; `import_dataset(store, name, importer, path, **options)` reads a layout and
writes what it holds through the storage repositories, idempotently, returning an `ImportSummary`.
"""
