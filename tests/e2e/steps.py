"""Steps shared by the browser tests: waiting for a handler's answer, uploading, painting, where things are."""

from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeout

STEP_MS = 180_000
"""Failure timeout of one step (the 2-core CI box may be busy); not a speed target (see bench/ui_latency.py)."""


def text_of(page, selector: str) -> str:
    """The text of a Markdown (its body, not a progress overlay) or of any element."""
    body = page.locator(f"{selector} [data-testid=markdown]")
    return body.inner_text() if body.count() else page.locator(selector).inner_text()


def _said(page, selector: str) -> str:
    """What the element says now (for a failure's message), or why it cannot be read."""
    try:
        return repr(page.locator(selector).first.inner_text(timeout=2_000)[:500])
    except Exception as exc:  # only a failure's message is being made
        return f"unreadable ({type(exc).__name__})"


def wait_text(page, selector: str, text: str, timeout: int = STEP_MS) -> str:
    """Wait until the element's text (a Markdown's body, once no progress shows) contains `text`; on a timeout the
    failure says what the element said instead."""
    try:
        page.wait_for_function(
            "([s, t]) => { const e = document.querySelector(s); if (!e || e.querySelector('.pending')) return false;"
            " const b = e.querySelector('[data-testid=markdown]') || e; return b.innerText.includes(t); }",
            arg=[selector, text],
            timeout=timeout,
        )
    except PlaywrightTimeout:
        raise AssertionError(
            f"{selector} never said {text!r} in {timeout / 1000:.0f} s; it says {_said(page, selector)}"
        ) from None
    return text_of(page, selector)


def wait_new_text(page, selector: str, before: str, text: str, timeout: int = STEP_MS) -> str:
    """Like `wait_text`, and the text differs from `before` (the handler has answered again)."""
    page.wait_for_function(
        "([s, b, t]) => { const e = document.querySelector(s); if (!e || e.querySelector('.pending')) return false;"
        " const x = (e.querySelector('[data-testid=markdown]') || e).innerText; return x !== b && x.includes(t); }",
        arg=[selector, before, text],
        timeout=timeout,
    )
    return text_of(page, selector)


BUSY = ".pending, .eta-bar, [data-testid=status-tracker]:not(.hide) .progress-text"
"""What a component shows while its answer is pending: Gradio's progress bar, or the timer of the translucent overlay
that covers a Markdown or a table (which carries neither of the others); a tracker showing an error has no timer."""


def wait_idle(page, timeout: int = STEP_MS) -> None:
    """Wait until no component shows progress."""
    page.wait_for_function(f"() => !document.querySelector({BUSY!r})", timeout=timeout)


def fill_settled(field, text: str, *, tries: int = 5) -> None:
    """Fill a text field and make sure the value stays: a field that has just appeared (a first-opened accordion)
    may still be given its initial value by the page after Playwright's fill."""
    field.wait_for(state="visible")
    for _ in range(tries):
        field.fill(text)
        field.page.wait_for_timeout(300)
        if field.input_value() == text:
            return
    raise AssertionError(f"the field kept {field.input_value()!r} instead of {text!r}")


def pick_radio(page, box: str, label: str) -> None:
    page.locator(box).get_by_text(label, exact=True).click()


def pick_option(page, box: str, label: str) -> None:
    page.locator(f"{box} input").click()
    page.get_by_role("option", name=label, exact=True).click()


def upload(page, box: str, path) -> None:
    page.locator(f"{box} input[type=file]").set_input_files(str(path))


def box(page, selector: str) -> dict:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not on the page"
    return found


def beside(page, message: str, button: str, *, reach: float = 90) -> bool:
    """True when `message` sits next to `button`: on the same row, or just below it (within `reach` px)."""
    m, b = box(page, message), box(page, button)
    same_row = m["y"] < b["y"] + b["height"] and b["y"] < m["y"] + max(m["height"], 1)
    below = 0 <= m["y"] - (b["y"] + b["height"]) <= reach
    return same_row or below


def in_view(page, selector: str) -> bool:
    """True when the element is wholly inside the window without scrolling the page."""
    b = box(page, selector)
    view = page.viewport_size
    return (
        b["x"] >= 0
        and b["y"] >= 0
        and b["x"] + b["width"] <= view["width"] + 1
        and b["y"] + b["height"] <= view["height"] + 1
    )


def paint_stroke(page, canvas_selector: str = "#mask-editor canvas") -> None:
    """One horizontal brush stroke across the middle of the image editor (`canvas_selector`: its canvas, under the
    editor's own selector)."""
    page.wait_for_function(f"document.querySelectorAll('{canvas_selector}').length > 0", timeout=STEP_MS)
    page.locator(canvas_selector.split()[0]).get_by_role("button", name="Brush", exact=True).click()
    canvas = page.locator(canvas_selector).first.bounding_box()
    cx, cy = canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2
    page.mouse.move(cx - 60, cy)
    page.mouse.down()
    for step in range(1, 13):
        page.mouse.move(cx - 60 + step * 10, cy + (step % 3) * 4)
    page.mouse.up()
    page.wait_for_timeout(500)


def brush_mask(page, editor: str, button: str, message: str, taken: str, tries: int = 4) -> str:
    """Paint a stroke on the image editor `editor` (its selector), press `button` and return `message`'s text once it
    contains `taken`. A stroke drawn while the editor may still be loading the background a handler has just sent (a
    frame selected, an image uploaded) can be dropped with the layer that background replaces, and the app answers
    that the brush layer is empty: as a person would, the stroke is painted again (at most `tries` strokes)."""
    seen = []
    for _ in range(tries):
        paint_stroke(page, f"{editor} canvas")
        page.locator(button).click()
        page.wait_for_timeout(300)
        wait_idle(page)
        seen.append(text_of(page, message))
        if taken in seen[-1]:
            return seen[-1]
    raise AssertionError(f"{button} never took the stroke; {message} said {seen}")


def toast_texts(page) -> list[str]:
    return page.locator(".toast-body, [data-testid=toast-body]").all_inner_texts()


def open_tab(page, name: str) -> None:
    """Click the tab called `name`; on a narrow window Gradio folds the tabs that do not fit into its "More tabs"
    menu, which is opened first."""
    page.locator("#tabs").wait_for(state="visible", timeout=STEP_MS)
    tab = page.get_by_role("tab", name=name, exact=True)
    more = page.locator('#tabs button[aria-label="More tabs"]')
    if not tab.is_visible() and more.is_visible():  # folded: the menu's entries are plain buttons
        more.click()
        page.locator("#tabs .overflow-dropdown").get_by_role("button", name=name, exact=True).click()
        return
    tab.click()
