"""What every page of the app carries besides its components: the style sheet (`CSS`) and the Rate tab's keyboard
shortcuts (`KEYBOARD_JS`, placed in the page's head)."""

CSS = (
    """
.demo-banner {background:#fff3cd;border:2px solid #e0a800;border-radius:8px;padding:6px 12px;font-weight:600}
.demo-banner summary {cursor:pointer}
.status-line {font-size:0.85em;color:#555}
#role-marker {position:absolute !important;width:0;height:0;overflow:hidden}
body:has(#role-marker [data-role=rater]) :is(#tab-score-button, #tab-browse-button, #tab-agreement-button,
  #tab-compare-button, #tab-leaderboard-button, #storage-banner-box)
  {display:none !important}
.status-line p {white-space:nowrap;overflow:hidden;text-overflow:ellipsis;margin:0}
.status-line:hover p, .status-line:focus-within p {white-space:normal}
.score-table-wrap {overflow-x:auto}
.score-table td, .score-table th {padding:4px 10px;border-bottom:1px solid #ddd;text-align:left}
.score-table .na {color:#a33}
.judge-answer summary {cursor:pointer;font-size:0.85em}
.judge-answer-text {white-space:pre-wrap;max-width:60ch;max-height:18em;overflow:auto;font-size:0.85em}
.score-caption {font-weight:600;margin:4px 0}
.stale-note {background:#fff3cd;border-left:4px solid #e0a800;border-radius:4px;padding:6px 10px;font-weight:600}
.action-message p {margin:2px 0}
.sample-link {border-left:4px solid #4a7dff;padding-left:8px}
.rate-active {box-shadow:inset 0 0 0 3px #4a7dff !important;border-radius:8px}
#rate-cp label, #rate-pf label, #rate-practice-cp label, #rate-practice-pf label
  {padding:3px 8px !important;font-size:0.88em;line-height:1.25}
#rate-cp .wrap, #rate-pf .wrap, #rate-practice-cp .wrap, #rate-practice-pf .wrap {gap:4px !important}
.kbd {font-family:monospace;border:1px solid #aaa;border-radius:3px;padding:0 4px;background:#f6f6f6}
/* Score tab uploads (media; upload.ImageUpload): an image with transparency is shown over white, which is exactly
   what is scored (imaging.load_image flattens it onto white), whatever the page's theme; the picture's box is the
   picture itself (not the whole frame, which would paint white margins around it), centred in the frame. */
#ref-image .image-frame, #out-image .image-frame {display:flex;align-items:center;justify-content:center}
#ref-image img, #out-image img {width:auto !important;height:auto !important;max-width:100% !important;
  max-height:100% !important;background:#fff}
"""
    + (
        # --- result tables (Browse, Compare, Leaderboard, Agreement, pairwise results): a cell never wraps (numbers and
        # intervals stay on one line, headers whole); a table wider than its box scrolls sideways inside it, the page never
        "\n:is(#browse-table, #cmp-table, #lb-table, #lb-agreement, #agree-table, #pw-ranking, #pw-accuracy, #pw-winrate,"
        " #pw-kendall) :is(td, th, .cell-wrap, .header-content, span) {white-space:nowrap !important}\n"
        ":is(#browse-table, #cmp-table, #lb-table, #lb-agreement, #agree-table, #pw-ranking, #pw-accuracy, #pw-winrate,"
        " #pw-kendall) .table-wrap {overflow-x:auto !important;max-width:100%}\n"
        ".table-note p {margin:2px 0;font-size:0.9em}\n"
    )
)

# Rating shortcuts: digits 0-4 set the highlighted scale, C / P pick a scale, Enter submits, S skips, F flags (or,
# while the reason box is empty, asks for a reason: a flag needs one), B goes back. Ignored while typing in a text
# field and when the Rate tab is hidden. The highlight: a score (key or mouse) moves it to the next scale still open
# (after the last scale it stays there, so a key never lands on a scale other than the one highlighted); once the
# server has answered (`window.mascRateSettle`, run after every answer event: `rate_tab.SETTLE_JS`) it goes to the
# first scale without a score: the first one on a new task, the missing one after a refused half answer.
# The same keys work in the practice round (`rate_guide`, shown instead of the rating panel): digits and C / P on its
# scales, Enter submits the practice answer, then (after its feedback) goes to the next practice task or starts
# rating; each practice task (told apart by its header) starts on its first scale without a score. On the rating
# guide shown before the tasks, Enter presses its Start rating (Back to rating) button.
KEYBOARD_JS = """
<script>
(() => {
  const order = ['cp', 'pf'];
  const active = {rate: order[0], practice: order[0]};
  const prefix = {rate: 'rate-', practice: 'rate-practice-'};
  let settling = false;
  let keying = false;
  const shown = (id) => { const el = document.getElementById(id); return !!el && el.offsetParent !== null; };
  // Which panel the keys act on: the rating panel, the practice round or the guide (one of them is shown at a time).
  const where = () => shown('rate-panel') ? 'rate' : shown('rate-practice') ? 'practice' : shown('rate-guide')
    ? 'guide' : null;
  const answered = (w, c) => !!document.querySelector('#' + prefix[w] + c + ' input[type=radio]:checked');
  const firstOpen = (w) => order.find((c) => !answered(w, c)) || order[0];
  const after = (w, c) => {
    const rest = order.slice(order.indexOf(c) + 1);
    return rest.find((x) => !answered(w, x)) || order.find((x) => !answered(w, x)) || rest[0] || c;
  };
  let practiceTask = null;
  const mark = () => {
    // A new practice task (its header changed) starts on the first scale without a score.
    const head = document.getElementById('rate-practice-header');
    const now = head ? head.innerText : null;
    if (now !== practiceTask) { practiceTask = now; active.practice = firstOpen('practice'); }
    for (const w of ['rate', 'practice']) {
      for (const k of order) {
        const el = document.getElementById(prefix[w] + k);
        if (el) el.classList.toggle('rate-active', k === active[w]);
      }
    }
  };
  const settle = () => { if (!settling) return; settling = false; active.rate = firstOpen('rate'); mark(); };
  // `mascRateAnswers` counts the tab's events the server has answered (what a test of the page waits for).
  window.mascRateAnswers = 0;
  window.mascRateSettle = () => { window.mascRateAnswers += 1; settling = true; setTimeout(settle, 0); };
  const press = (id) => { const b = document.getElementById(id); if (b) b.click(); };
  const pressShown = (...ids) => { const id = ids.find(shown); if (id) press(id); return !!id; };
  const choose = (w, scale, digit) => {
    const box = document.getElementById(prefix[w] + scale);
    const input = box && box.querySelector('input[type=radio][value="' + digit + '"]');
    if (!input) return;
    keying = true;
    try { input.click(); } finally { keying = false; }
  };
  const scales = (w, k) => {
    if (/^[0-4]$/.test(k)) { const scale = active[w]; choose(w, scale, k); active[w] = after(w, scale); }
    else if (k === 'c') active[w] = 'cp';
    else if (k === 'p') active[w] = 'pf';
    else return false;
    return true;
  };
  document.addEventListener('keydown', (e) => {
    const w = where();
    if (!w || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === 'TEXTAREA' || (t.tagName === 'INPUT' && t.type !== 'radio'))) return;
    const k = e.key.toLowerCase();
    // Enter on a focused button or link (reached with Tab) is that control's own.
    const onControl = !!(t && t.closest && t.closest('a, button, summary'));
    if (w === 'guide') {
      if (k !== 'enter' || onControl || !pressShown('rate-guide-start')) return;
    } else if (w === 'practice') {
      if (k === 'enter') {
        if (onControl || !pressShown('rate-practice-submit', 'rate-practice-next')) return;
      } else if (!scales(w, k)) return;
    } else {
      settle();
      if (scales(w, k)) { /* a score or a scale picked */ }
      else if (k === 'enter') press('rate-submit');
      else if (k === 's') press('rate-skip');
      else if (k === 'f') {
        const why = document.querySelector('#rate-reason textarea, #rate-reason input');
        press('rate-flag');
        if (why && !why.value.trim()) why.focus();
      }
      else if (k === 'b') press('rate-back');
      else return;
    }
    e.preventDefault();
    mark();
  }, true);
  // A score given with the mouse moves the highlight on too.
  document.addEventListener('change', (e) => {
    if (keying || e.target.type !== 'radio' || !e.target.closest) return;
    for (const w of ['practice', 'rate']) {
      const scale = order.find((c) => e.target.closest('#' + prefix[w] + c));
      if (scale) { active[w] = after(w, scale); mark(); return; }
    }
  }, true);
  // A warning under the buttons (nothing saved, a score missing) is brought into view: the answer events skip
  // Gradio's queue (`rate_tab.ANSWER_QUEUE`), which shows no toast for them, and in a short window the message
  // line is below the fold.
  let warned = '';
  const reveal = () => {
    const box = document.getElementById('rate-message');
    const text = box ? box.innerText.trim() : '';
    if (text.startsWith('\u26a0') && text !== warned && shown('rate-panel')) box.scrollIntoView({block: 'nearest'});
    warned = text;
  };
  new MutationObserver(() => { mark(); reveal(); }).observe(document.documentElement,
                                                            {childList: true, subtree: true, characterData: true});
})();
</script>
"""
