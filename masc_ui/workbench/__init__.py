"""The use cases, shared by the web app, the CLI, batch scoring and the importers; one module per concern:

- `factory`: `build_workbench(settings)`, the one composition root (profile resolved once, demo checkpoints
  written, the shared pieces every use case is built from);
- `workbench`: `Workbench`, the container of the use cases of one process;
- `scoring`: inputs decoded once, Run (every metric, each backbone once, result cache), Explain, the catalogue
  explanations, `masc-ui score` (`score_files`: its arguments, checked before any model loads);
- `explain`, `catalogue_explain`: MaSC patch maps drawn as pictures; VQAScore, ITMScore, FaceSim, FaceScore shown;
- `masks`: the Score tab's mask editing and uploads, Segment Anything / SAM 3 use cases, `masc-ui segment`;
- `video`, `video_session`: a video output's frames, per-frame series, poster; its mask in a Score tab session;
- `recorder`: the one path from scored values to the database (Save, batch, imported judge values); `saving`:
  the Score tab's Save;
- `ratings`: rating tasks (next, back, progress, submit);
- `pairwise`: pairwise rating tasks (which of two outputs is better: next, back, answer, skip, flag, progress);
- `browse`: browse, open and export stored samples (and the pairwise judgments);
- `compare`: two stored outputs of one reference side by side (metrics, differences, patch maps on shared scales);
- `agreement`: metric-vs-human agreement tables and scatter data;
- `leaderboard`: per method (or category) means with CIs, ranks, rank agreement, the plot matrix;
- `pairwise_analysis`: rankings, win rates, rater agreement and metric accuracy from pairwise judgments;
- `imports`, `ingest`: `masc-ui import` (parse a benchmark layout, store it); `batch`: `masc-ui batch`;
- `database`: the store (opened once, typed repositories, errors as `StoreError`), database upkeep (`masc-ui db`);
- `examples`, `users`, `profile`, `status`: example pairs, logins, the profile in use, the status line.

Only this package imports `storage`; nothing here imports gradio. `from masc_ui.workbench import Workbench` loads
the models' side lazily, so a use case such as `recorder` can be imported without torch.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "Workbench": "workbench",
    "build_workbench": "factory",
    "ScoreReport": "scoring",
    "ScoreRow": "scoring",
    "sample_fingerprint": "scoring",
    "Status": "status",
    "DEMO_BANNER": "status",
    "DEMO_NOTICE": "status",
    "StoreError": "database",
    "Saved": "recorder",
    "format_value": ".analysis.numbers",  # masc_ui.analysis.numbers: how every value is written, for the edge
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'masc_ui.workbench' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)


__all__ = list(_EXPORTS)
