"""`masc-ui push`: an exported image folder (`dataset_export.write_imagefolder`) to a Hugging Face Hub dataset
repository, with `huggingface_hub` (`HfApi.create_repo(..., repo_type="dataset", exist_ok=True)` then
`HfApi.upload_folder`). Everything before the upload is checked here, offline: the repository id, the folder (its
metadata names only files inside it, all present), offline mode, a token. The upload itself needs the network."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, WorkbenchError
from ..models.hub_probe import hub_offline
from .dataset_export import check_imagefolder

REPO_TYPE = "dataset"


class HubError(WorkbenchError):
    """The Hub refused or failed the upload; the message says what it answered and what to do."""


@dataclass(frozen=True)
class PushPlan:
    """What `push` will upload, checked without the network."""

    folder: Path
    repo_id: str
    rows: int
    files: int
    private: bool
    commit_message: str


@dataclass(frozen=True)
class Pushed:
    plan: PushPlan
    url: str
    """The dataset repository's page."""
    commit_url: str | None


def plan_push(folder: Path, repo_id: str, *, private: bool = False, commit_message: str | None = None) -> PushPlan:
    """Check everything a push needs before it talks to the Hub; InputError naming what is wrong and what to do."""
    from huggingface_hub import get_token
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]  # in its __all__ at run time

    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise InputError(
            f"--repo {repo_id!r} is not a Hub repository id ({exc}); use OWNER/NAME, e.g. me/dreambench-ratings"
        ) from None
    if "/" not in repo_id:
        raise InputError(f"--repo {repo_id!r} needs its owner: OWNER/NAME, e.g. me/{repo_id}")
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder; write one with `masc-ui export --format imagefolder -o {folder}`")
    rows = check_imagefolder(folder)
    if hub_offline():
        raise InputError("HF_HUB_OFFLINE is set: the Hub cannot be reached in offline mode; unset it to push")
    if get_token() is None:
        raise InputError(
            "no Hugging Face token: log in with `hf auth login` (or set HF_TOKEN) with a token that may "
            "write to " + repo_id
        )
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    message = commit_message or f"MaSC Workbench export: {rows} samples"
    return PushPlan(folder, repo_id, rows, files, private, message)


def push(plan: PushPlan) -> Pushed:
    """Create the dataset repository if needed (private when asked; an existing one keeps its visibility) and
    upload the folder in one commit. HubError with the Hub's answer when it refuses or cannot be reached."""
    from huggingface_hub import HfApi

    api = HfApi()
    try:
        repo = api.create_repo(plan.repo_id, repo_type=REPO_TYPE, private=plan.private or None, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(plan.folder), repo_id=plan.repo_id, repo_type=REPO_TYPE, commit_message=plan.commit_message
        )
    except Exception as exc:  # huggingface_hub (HTTP errors) and its HTTP client (no network) raise many types
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HubError(
            f"push to the Hub dataset {plan.repo_id} failed ({type(exc).__name__}: {reason}); check the "
            "network, the token's write permission and the repository id, then run it again (the upload "
            "is one commit: nothing was half-written)"
        ) from exc
    return Pushed(plan, str(getattr(repo, "url", repo)), getattr(commit, "commit_url", None))
