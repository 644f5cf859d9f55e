"""The use cases, shared by the web app, the CLI, batch scoring and the importers; one module per concern:

- `scoring`: inputs decoded once, Run (every metric, each backbone once, result cache), Explain, `masc-ui score`;
- `explain`: MaSC patch maps drawn as pictures;
- `masks`: the Score tab's mask editing and uploads, Segment Anything / SAM 3 use cases, `masc-ui segment`;
- `records`: the one path from scored values to the database (Save, batch, imported judge values);
- `ratings`: rating tasks (next, back, progress, submit);
- `pairwise`: pairwise rating tasks (which of two outputs is better: next, back, answer, skip, flag, progress);
- `browse`: browse, open and export stored samples (and the pairwise judgments);
- `compare`: two stored outputs of one reference side by side (metrics, differences, patch maps on shared scales);
- `agreement`: metric-vs-human agreement tables and scatter data;
- `leaderboard`: per method (or category) means with CIs, ranks, rank agreement, the plot matrix;
- `pairwise_analysis`: rankings, win rates, rater agreement and metric accuracy from pairwise judgments;
- `imports`: `masc-ui import` (parse a benchmark layout, ingest it);
- `database`: the store (opened once, errors as `StoreError`), database upkeep (`masc-ui db`);
- `examples`, `users`, `profile`, `status`: example pairs, rater logins, the profile in use, the status line;
- `workbench`: `Workbench`, the use cases of one process over one Settings and one ModelRegistry.

Only this package (and `masc_ui.workbench.ingest`) imports `storage`; nothing here imports gradio.
`from masc_ui.workbench import Workbench` loads the models' side lazily, so a use case such as `records` can be
imported without torch.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "Workbench": "workbench",
    "ScoreReport": "scoring",
    "ScoreRow": "scoring",
    "sample_fingerprint": "scoring",
    "Status": "status",
    "DEMO_BANNER": "status",
    "StoreError": "database",
    "Saved": "records",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'masc_ui.workbench' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)


__all__ = list(_EXPORTS)
