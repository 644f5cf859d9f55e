"""What each role's browser is told about the app: its page, `/config` and `/gradio_api/info`.

Gradio sends every caller the whole app: every component of every tab (hidden ones too), every event and the API
description of every endpoint, embedded in the page (`window.gradio_config`, `window.gradio_api_info`). Hiding
a tab hides nothing from a rater who reads them, and the login page alone weighed 750 KB. Here (served by
`route_gate.RouteGate` in place of Gradio's handlers for everyone but admins):

- an anonymous visitor gets Gradio's login page with nothing of the app: no component, no event, an empty API
  description (`login_page`);
- a rater gets the app cut down to the blocks declared for raters (`show_raters`; default deny: nothing else is
  theirs), the containers above them and the events a rater may run (`roles.guard_endpoints` marks them; those that run
  only in the browser too) that touch only those blocks; the API description lists just those events (`rater_view`);
- a crowd study's participant (`route_gate`, `workbench.studies`) gets the app cut down the same way to the blocks
  declared for participants (`show_participants`: the Rate tab alone, no Log out) and the rater events among them
  (`participant_view`);
- admins get Gradio's answers unchanged.
"""

from __future__ import annotations

import html
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import gradio as gr
from gradio import route_utils, utils
from gradio.routes import ORJSONResponse, templates
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from .roles import for_raters

PAGE_PATHS = {"/": "page", "/config": "config", "/config/": "config", "/gradio_api/info": "info"}
PAGE_PATHS["/gradio_api/info/"] = "info"
"""Request path (inside the app) -> what the gate answers itself for a caller who is not an admin."""
EMPTY_API = {"named_endpoints": {}, "unnamed_endpoints": {}}

_RATER_BLOCKS: weakref.WeakKeyDictionary[gr.Blocks, frozenset[int]] = weakref.WeakKeyDictionary()
_PARTICIPANT_BLOCKS: weakref.WeakKeyDictionary[gr.Blocks, frozenset[int]] = weakref.WeakKeyDictionary()
_VIEWS: weakref.WeakKeyDictionary[gr.Blocks, tuple[int, View]] = weakref.WeakKeyDictionary()
_PARTICIPANT_VIEWS: weakref.WeakKeyDictionary[gr.Blocks, tuple[int, View]] = weakref.WeakKeyDictionary()


def show_raters(app: gr.Blocks, blocks: Iterable[gr.blocks.Block]) -> None:
    """Declare `blocks` (and everything inside them) the part of `app` a rater's page holds."""
    _RATER_BLOCKS[app] = frozenset(block._id for block in blocks)


def show_participants(app: gr.Blocks, blocks: Iterable[gr.blocks.Block]) -> None:
    """Declare `blocks` (and everything inside them) the part of `app` a crowd study participant's page holds."""
    _PARTICIPANT_BLOCKS[app] = frozenset(block._id for block in blocks)


@dataclass(frozen=True)
class View:
    """One role's share of the app: Gradio's config (components, layout, events) and API description."""

    config: dict[str, Any]
    api_info: dict[str, Any]

    @property
    def component_ids(self) -> set[int]:
        return {c["id"] for c in self.config["components"]}

    @property
    def dependency_ids(self) -> set[int]:
        return {d["id"] for d in self.config["dependencies"]}


def rater_view(blocks: gr.Blocks) -> View:
    """The rater's view of `blocks` (see the module docstring); computed once per config."""
    return _view(blocks, _RATER_BLOCKS, _VIEWS)


def participant_view(blocks: gr.Blocks) -> View:
    """A study participant's view of `blocks`: the blocks of `show_participants` and the rater events among them
    (see the module docstring); computed once per config. Nothing is shown when no part was declared."""
    return _view(blocks, _PARTICIPANT_BLOCKS, _PARTICIPANT_VIEWS)


def _view(
    blocks: gr.Blocks,
    shown: weakref.WeakKeyDictionary[gr.Blocks, frozenset[int]],
    views: weakref.WeakKeyDictionary[gr.Blocks, tuple[int, View]],
) -> View:
    config = blocks.config
    cached = views.get(blocks)
    if cached is not None and cached[0] == id(config):
        return cached[1]
    view = cut(
        config,
        shown.get(blocks, frozenset()),
        {i for i, fn in blocks.fns.items() if fn.fn is None or for_raters(fn.fn)},
    )
    info = blocks.get_api_info()
    names = {f"/{blocks.fns[i].api_name}" for i in view.dependency_ids if isinstance(blocks.fns[i].api_name, str)}
    api_info = {
        "named_endpoints": {k: v for k, v in info["named_endpoints"].items() if k in names},
        "unnamed_endpoints": {k: v for k, v in info["unnamed_endpoints"].items() if int(k) in view.dependency_ids},
    }
    view = View(view.config, api_info)
    views[blocks] = (id(config), view)
    return view


def cut(config: dict[str, Any], shown: frozenset[int], allowed_events: set[int]) -> View:
    """`config` cut down to the blocks in `shown` (with what they hold and the containers above them) and the
    events of `allowed_events` that touch nothing else; deep-copied, the original untouched."""
    root = config["layout"]["id"]
    kept: set[int] = set()

    def prune(node: dict[str, Any], inside: bool) -> dict[str, Any] | None:
        inside = inside or node["id"] in shown
        children = [c for c in (prune(child, inside) for child in node.get("children", ())) if c is not None]
        if not (inside or children or node["id"] == root):
            return None
        kept.add(node["id"])
        return {"id": node["id"], **({"children": children} if "children" in node else {})}

    layout = prune(config["layout"], False)
    events: dict[int, dict[str, Any]] = {}
    for dep in sorted(config["dependencies"], key=lambda d: d["id"]):
        touched = [*dep["inputs"], *dep["outputs"], *(t[0] for t in dep["targets"] if t[0] is not None)]
        after = dep.get("trigger_after")
        if dep["id"] in allowed_events and set(touched) <= kept and (after is None or after in events):
            events[dep["id"]] = {**dep, "cancels": [c for c in dep.get("cancels", ()) if c in allowed_events]}
    out = {k: v for k, v in config.items() if k not in ("components", "dependencies", "layout", "page")}
    out = utils.safe_deepcopy(out)
    out["components"] = utils.safe_deepcopy([c for c in config["components"] if c["id"] in kept])
    out["dependencies"] = utils.safe_deepcopy(list(events.values()))
    out["layout"] = layout
    out["page"] = {"": {"layout": layout, "components": sorted(kept), "dependencies": sorted(events)}}
    out["pages"] = [""]
    out["current_page"] = ""
    return View(out, {})


def login_config(blocks: gr.Blocks, root: str, notice: str | None = None) -> dict[str, Any]:
    """Gradio's config of the login page (what its `GET /` sends a visitor who is not logged in); `notice` (plain
    text: why the visitor's last session ended) is shown under the login message, in `#session-ended`."""
    message = blocks.auth_message or ""
    if notice:
        message += f'<p id="session-ended" role="alert"><strong>⚠ {html.escape(notice)}</strong></p>'
    return {
        "auth_required": True,
        "auth_message": message or None,
        "space_id": blocks.space_id,
        "root": root,
        "page": {"": {"layout": {}}},
        "pages": [""],
        "components": [],
        "dependencies": [],
        "current_page": "",
    }


def answer(
    scope: Any, path: str, user: str | None, role: str, *, ended: tuple[str, tuple[str, ...]] | None = None
) -> Response | None:
    """The gate's own answer to a page, config or API-description request of a caller who is not an admin
    (`role` "anonymous", "rater" or "participant"; `path` inside the app); None when the request is none of those (Gradio answers it).
    `ended`: (why the visitor's last session ended, its cookies), said on the login page, the cookies cleared."""
    kind = PAGE_PATHS.get(path) if scope.get("method") in ("GET", "HEAD") else None
    if kind is None or role == "admin":
        return None
    request = Request(scope)
    server = scope["app"]
    blocks = server.get_blocks()
    route = {"page": "/", "config": "/config", "info": "/gradio_api/info"}[kind]
    root = route_utils.get_root_url(
        request=request,
        route_path=route,
        root_path=server.root_path or scope.get("root_path") or blocks.custom_mount_path,
    )
    if role not in ("rater", "participant"):
        if kind != "page":
            return None  # the gate refuses these to visitors before asking here
        notice, stale = ended if ended is not None else (None, ())
        page = _page(request, login_config(blocks, root, notice), EMPTY_API)
        for name in stale:  # said once: the next visit to the login page is a plain one
            page.delete_cookie(key=name, path="/")
        return page
    view = rater_view(blocks) if role == "rater" else participant_view(blocks)
    if kind == "info":
        return ORJSONResponse(route_utils.update_example_values_to_use_public_url(utils.safe_deepcopy(view.api_info)))
    config = utils.safe_deepcopy(view.config)
    config["username"] = user
    config = route_utils.update_root_in_config(config, root)
    if kind == "config":
        i18n = getattr(blocks, "i18n_instance", None)
        config["i18n_translations"] = i18n.translations_dict if i18n else None
        return ORJSONResponse(config)
    config["deep_link_state"] = "none"
    return _page(request, config, view.api_info)


def _page(request: Request, config: dict[str, Any], api_info: dict[str, Any]) -> HTMLResponse:
    return templates.TemplateResponse(
        request=request,
        name="frontend/index.html",
        context={"base_url": "./", "config": config, "gradio_api_info": api_info},
    )
