"""What a crowd study participant's Rate tab adds (`workbench.studies`): at the end, the completion code and, for a
study with a redirect URL, the link the page follows at once (`REDIRECT_JS`)."""

from __future__ import annotations

from ..errors import WorkbenchError
from ..workbench import Workbench

CONTINUE = "Continue to the study's site"
"""The text of the finished page's link to the study's redirect URL (what `REDIRECT_JS` follows)."""
REDIRECT_JS = (
    "<script>(() => { const seen = new WeakSet(); new MutationObserver(() => {"
    " const box = document.querySelector('#rate-prompt');"
    " if (!box || !box.textContent.trim().startsWith('Study finished.')) return;"
    f" const link = [...box.querySelectorAll('a[href]')].find(a => a.textContent.trim() === {CONTINUE!r});"
    " if (link && !seen.has(link) && /^https?:/.test(link.href)) { seen.add(link); window.location.assign(link.href); }"
    " }).observe(document.documentElement, {childList: true, subtree: true, characterData: true}); })();</script>"
)
"""Page script: when the Rate tab shows a finished study's page with its link to the redirect URL, the browser goes
there (the server also sends a finished participant who opens the page again straight there: `route_gate`)."""


def finished_note(wb: Workbench, user: str | None) -> str | None:
    """The finished page of a study participant who has finished (Markdown), None for everybody else."""
    try:
        done = wb.studies.finished(user) if user is not None else None
    except WorkbenchError:
        return None
    if done is None:
        return None
    parts = ["**Study finished.** Thank you!"]
    if done.code:
        parts.append(f"Your completion code is **{done.code}**: enter it on the study's site.")
    if done.redirect_url:
        url = done.redirect_url.replace("(", "%28").replace(")", "%29")
        parts.append(f"[{CONTINUE}]({url}): you are taken there now.")
    return " ".join(parts)
