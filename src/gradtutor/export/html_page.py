"""A narrated run as one self-contained HTML page that steps through it.

Like Python Tutor: the code on the left with the current statement
highlighted, the step on the right (its events and explanations, the graph
after it with every marker explained, the gradients), and Previous/Next
buttons, a slider and the arrow keys to move. Styles and script are inline:
the page needs no network. Without script, and on paper, every step is shown
in order, each with its own code.
"""

from __future__ import annotations

import html

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers.python import PythonLexer

from gradtutor import __version__
from gradtutor.export.html_fragments import MONOSPACE, frame_html, theme_stylesheet
from gradtutor.render.words import say
from gradtutor.transcript import Frame, Listing, Transcript, format_grad

_PAGE_CSS = """
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; margin: 0; color: #1b1b1b;
       background: #fff; line-height: 1.45; }
header { padding: 0.6em 1.2em; border-bottom: 1px solid #ddd; }
header h1 { font-size: 1.2em; margin: 0; }
header p { margin: 0.2em 0 0; color: #666; font-size: 0.85em; }
nav { display: flex; gap: 0.8em; align-items: center; padding: 0.5em 1.2em; border-bottom: 1px solid #ddd;
      position: sticky; top: 0; background: #f7f7f7; z-index: 1; }
nav input[type=range] { flex: 1; }
nav button { font: inherit; padding: 0.2em 0.9em; }
#gt-counter { min-width: 8em; font-variant-numeric: tabular-nums; }
main { display: grid; grid-template-columns: minmax(16em, 2fr) 3fr; gap: 1.2em; padding: 1em 1.2em; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } }
.gt-code { font-family: MONO; font-size: 13px; overflow-x: auto; align-self: start; position: sticky; top: 3.2em;
           max-height: calc(100vh - 4em); overflow-y: auto; border: 1px solid #e4e4e4; border-radius: 4px; }
.gt-listing-title { font-weight: bold; padding: 0.3em 0.6em; background: #f3f3f3; border-bottom: 1px solid #e4e4e4; }
.gt-line { display: block; white-space: pre; padding: 0 0.6em 0 0; border-left: 4px solid transparent; }
.gt-line .gt-no { display: inline-block; width: 3.2em; text-align: right; padding-right: 0.8em; color: #999;
                  user-select: none; }
.gt-line.gt-current { background: #fff3b0; border-left-color: #e0a800; }
.gt-frame h2 { font-size: 1.05em; margin: 0 0 0.3em; }
.gt-frame pre { font-family: MONO; font-size: 13px; }
.gt-source { background: #f6f6f6; padding: 0.3em 0.6em; border-radius: 4px; white-space: pre-wrap; margin: 0.3em 0; }
.gt-picture { line-height: 1.17; margin: 0.6em 0; overflow-x: auto; }
.gt-events { padding-left: 1.3em; margin: 0.4em 0; }
.gt-events p { margin: 0.15em 0 0.5em; }
.gt-error { color: #b00000; white-space: pre-wrap; }
.gt-output, .gt-value { white-space: pre-wrap; background: #fafafa; border-left: 3px solid #ccc; padding: 0.2em 0.6em; }
.gt-grads { border-collapse: collapse; font-size: 0.9em; margin: 0.4em 0; }
.gt-grads td, .gt-grads th { border: 1px solid #ddd; padding: 0.15em 0.5em; text-align: left; vertical-align: top; }
.gt-grads td.gt-value-cell { font-family: MONO; }
.gt-epilogue { margin: 0 1.2em 1em; }
.gt-epilogue pre { white-space: pre-wrap; font-family: MONO; font-size: 12px; }
.gt-note { color: #555; }
@media print {
  nav, .gt-code { display: none; }
  main { display: block; padding: 0; }
  .gt-frame, .gt-frame[hidden] { display: block; break-inside: avoid; border-top: 1px solid #ccc; padding-top: 0.5em; }
  .gt-picture { overflow: visible; white-space: pre; font-size: 10px; }
}
"""

_SCRIPT = """
(function () {
  var frames = Array.prototype.slice.call(document.querySelectorAll('.gt-frame'));
  var slider = document.getElementById('gt-slider');
  var counter = document.getElementById('gt-counter');
  var prev = document.getElementById('gt-prev');
  var next = document.getElementById('gt-next');
  var current = -1;
  function show(i) {
    i = Math.max(0, Math.min(frames.length - 1, i));
    if (i === current) return;
    current = i;
    frames.forEach(function (f, k) { f.hidden = k !== i; });
    document.querySelectorAll('.gt-line.gt-current').forEach(function (l) { l.classList.remove('gt-current'); });
    var f = frames[i], first = null;
    for (var n = +f.dataset.first; n <= +f.dataset.last; n++) {
      var line = document.getElementById('L' + f.dataset.listing + '-' + n);
      if (line) { line.classList.add('gt-current'); first = first || line; }
    }
    if (first && first.scrollIntoView) first.scrollIntoView({block: 'nearest'});
    slider.value = String(i + 1);
    counter.textContent = counter.dataset.template.replace('{n}', i + 1).replace('{total}', frames.length);
    prev.disabled = i === 0;
    next.disabled = i === frames.length - 1;
    document.body.dataset.step = String(i + 1);
    try { history.replaceState(null, '', '#step-' + (i + 1)); } catch (e) { /* file: pages may refuse */ }
  }
  prev.addEventListener('click', function () { show(current - 1); });
  next.addEventListener('click', function () { show(current + 1); });
  slider.addEventListener('input', function () { show(+slider.value - 1); });
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target === slider) return;  // the slider moves itself and reports it
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { show(current + 1); e.preventDefault(); }
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { show(current - 1); e.preventDefault(); }
    else if (e.key === 'Home') { show(0); e.preventDefault(); }
    else if (e.key === 'End') { show(frames.length - 1); e.preventDefault(); }
  });
  var m = /^#step-(\\d+)$/.exec(location.hash);
  show(m ? +m[1] - 1 : 0);
})();
"""


def render_html(transcript: Transcript) -> str:
    """The whole page, as one string."""
    frames = transcript.frames
    listing_index = {listing.file: i for i, listing in enumerate(transcript.listings)}
    title = html.escape(transcript.title)
    language = transcript.options.language

    def words(key: str, **fields: object) -> str:
        return html.escape(say(language, key, **fields))

    parts = [
        "<!DOCTYPE html>",
        '<html lang="{}">'.format(html.escape(transcript.options.language)),
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="gradtutor {html.escape(__version__)}">',
        f"<title>{title}</title>",
        "<style>",
        _PAGE_CSS.replace("MONO", MONOSPACE),
        theme_stylesheet(),
        HtmlFormatter().get_style_defs(".gt-code"),
        "</style>",
        "</head>",
        "<body>",
        f"<header><h1>{title}</h1><p>{words('page_about', version=__version__)}</p></header>",
        f'<nav aria-label="{words("page_steps")}">',
        f'<button id="gt-prev" type="button" aria-keyshortcuts="ArrowLeft">&#9664; {words("page_previous")}</button>',
        f'<input id="gt-slider" type="range" min="1" max="{max(1, len(frames))}" value="1"'
        f' aria-label="{words("page_step_label")}">',
        f'<span id="gt-counter" data-template="{words("page_counter", n="{n}", total="{total}")}">'
        f'{words("page_counter", n=1, total=len(frames))}</span>',
        f'<button id="gt-next" type="button" aria-keyshortcuts="ArrowRight">{words("page_next")} &#9654;</button>',
        "</nav>",
        "<main>",
        f'<section class="gt-code" aria-label="{words("page_code")}">',
        *(_listing_html(i, listing) for i, listing in enumerate(transcript.listings)),
        "</section>",
        '<section class="gt-steps">',
        *(_frame_article(transcript, frame, listing_index.get(frame.file, -1)) for frame in frames),
        "</section>",
        "</main>",
    ]
    if transcript.epilogue:
        parts.append('<section class="gt-epilogue">')
        parts += [f'<pre class="gt-note">{html.escape(line)}</pre>' for line in transcript.epilogue]
        parts.append("</section>")
    parts += ["<script>", _SCRIPT, "</script>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _listing_html(index: int, listing: Listing) -> str:
    lines = highlight(listing.text, PythonLexer(), HtmlFormatter(nowrap=True)).rstrip("\n").split("\n")
    rows = [
        f'<span class="gt-line" id="L{index}-{n}"><span class="gt-no">{n}</span>{code}</span>'
        for n, code in enumerate(lines, 1)
    ]
    return f'<div class="gt-listing-title">{html.escape(listing.title)}</div>' + "".join(rows)


def _frame_article(transcript: Transcript, frame: Frame, listing: int) -> str:
    picture = transcript.picture(frame)
    grads = frame.last_step.snapshot.grads
    body = [
        f'<article class="gt-frame" id="step-{frame.number}" data-listing="{listing}"'
        f' data-first="{frame.first_line}" data-last="{frame.last_line}">',
        f"<h2>{html.escape(say(frame.language, 'page_step', n=frame.number, total=len(transcript.frames), place=frame.place))}</h2>",
        f'<pre class="gt-source">{html.escape(frame.source)}</pre>',
        frame_html(frame, drawing=picture),
    ]
    if grads:
        rows = "".join(
            f'<tr><th>{html.escape(name)}.grad</th>'
            f'<td class="gt-value-cell">{html.escape(format_grad(value))}</td></tr>'
            for name, value in grads
        )
        body.append(f'<table class="gt-grads">{rows}</table>')
    body.append("</article>")
    return "\n".join(body)

