"""The one composition root: `build_workbench(settings)` makes the `Workbench` of a process, the same way for the
web app (`app.py`, `masc-ui serve`), every CLI command and batch scoring.

It decides the model profile once, by the quick rule of `masc_ui.models.auto_profile` (`auto`: local folders and
the Hugging Face cache first, then at most one short Hub probe, so an offline machine gets `demo` in about a second
and no download is ever retried); writes the tiny demo checkpoints that are missing when the profile is `demo`
(whichever command runs first on a fresh data folder); and makes the shared pieces (model registry, logins,
database) that every use case of the workbench is built from. Every use case sees the resolved profile, so no
model loader asks the Hub for a `paper` checkpoint after `auto` became `demo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..models.loaded_models import ModelRegistry
from ..settings import Settings
from .database import Database
from .profile import resolve_profile, unresolved_profile
from .users import Accounts
from .workbench import Workbench

if TYPE_CHECKING:
    from storage import Store


def build_workbench(
    settings: Settings,
    *,
    store: Store | None = None,
    models: ModelRegistry | None = None,
    accounts: Accounts | None = None,
    resolve: bool = True,
) -> Workbench:
    """The workbench of `settings`.

    Args:
        store: a `storage.Store` already open to use (closing it stays with its owner); default: the settings'
            database, opened on first use.
        models: the model registry to share (default: a new one).
        accounts: the logins and roles (default: the settings' users file and `MASC_USERS`; `Accounts()` = none,
            everyone acts as admin).
        resolve: decide the profile now (`auto` -> paper or demo, demo checkpoints written). False for a process
            that loads no model (database upkeep, exports, imports, analyses): nothing is probed, and its use cases
            that load models refuse to run on an unresolved `auto`.
    """
    models = models if models is not None else ModelRegistry()
    profile = resolve_profile(settings, models) if resolve else unresolved_profile(settings)
    if profile.name != settings.profile:
        settings = settings.replace(profile=profile.name)
    if resolve and profile.name == "demo":
        from .profile import write_demo_checkpoints

        write_demo_checkpoints(settings.resolved_demo_weights_dir)
    accounts = accounts if accounts is not None else Accounts.from_settings(settings)
    return Workbench(settings, profile, models, accounts, Database(settings, store, accounts=accounts))
