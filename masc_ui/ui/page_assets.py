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
.score-caption {font-weight:600;margin:4px 0}
.stale-note {background:#fff3cd;border-left:4px solid #e0a800;border-radius:4px;padding:6px 10px;font-weight:600}
.action-message p {margin:2px 0}
.sample-link {border-left:4px solid #4a7dff;padding-left:8px}
.rate-active {box-shadow:inset 0 0 0 3px #4a7dff !important;border-radius:8px}
#rate-cp label, #rate-pf label {padding:3px 8px !important;font-size:0.88em;line-height:1.25}
#rate-cp .wrap, #rate-pf .wrap {gap:4px !important}
.kbd {font-family:monospace;border:1px solid #aaa;border-radius:3px;padding:0 4px;background:#f6f6f6}
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

# Rating shortcuts: digits 0-4 set the active scale (CP first, then PF), C / P pick a scale, Enter submits,
# S skips, F flags (or, while the reason box is empty, puts the cursor there: a flag needs a reason), B goes back.
# Ignored while typing in a text field and when the Rate tab is hidden.
KEYBOARD_JS = """
<script>
(() => {
  let active = 'cp';
  const panel = () => document.getElementById('rate-panel');
  const visible = () => { const p = panel(); return p && p.offsetParent !== null; };
  const mark = () => {
    for (const k of ['cp', 'pf']) {
      const el = document.getElementById('rate-' + k);
      if (el) el.classList.toggle('rate-active', k === active);
    }
  };
  const press = (id) => { const b = document.getElementById(id); if (b) b.click(); };
  const choose = (scale, digit) => {
    const box = document.getElementById('rate-' + scale);
    if (!box) return;
    const input = box.querySelector('input[type=radio][value="' + digit + '"]');
    if (input) input.click();
  };
  document.addEventListener('keydown', (e) => {
    if (!visible() || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === 'TEXTAREA' || (t.tagName === 'INPUT' && t.type !== 'radio'))) return;
    const k = e.key.toLowerCase();
    if (/^[0-4]$/.test(k)) { choose(active, k); active = active === 'cp' ? 'pf' : 'cp'; }
    else if (k === 'c') active = 'cp';
    else if (k === 'p') active = 'pf';
    else if (k === 'enter') { press('rate-submit'); active = 'cp'; }
    else if (k === 's') { press('rate-skip'); active = 'cp'; }
    else if (k === 'f') {
      const why = document.querySelector('#rate-reason textarea, #rate-reason input');
      if (why && !why.value.trim()) { why.focus(); } else { press('rate-flag'); active = 'cp'; }
    }
    else if (k === 'b') { press('rate-back'); active = 'cp'; }
    else return;
    e.preventDefault();
    mark();
  }, true);
  // A warning under the buttons (nothing saved, a score missing) is brought into view: the answer events skip
  // Gradio's queue (`rate_tab.ANSWER_QUEUE`), which shows no toast for them, and in a short window the message
  // line is below the fold.
  let warned = '';
  const reveal = () => {
    const box = document.getElementById('rate-message');
    const text = box ? box.innerText.trim() : '';
    if (text.startsWith('\u26a0') && text !== warned && visible()) box.scrollIntoView({block: 'nearest'});
    warned = text;
  };
  new MutationObserver(() => { mark(); reveal(); }).observe(document.documentElement,
                                                            {childList: true, subtree: true, characterData: true});
})();
</script>
"""
