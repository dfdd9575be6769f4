"""The static HTML page: one `index.html` (inline CSS and plain JS, nothing fetched, so it
opens from disk offline) beside `plots/`.

The table is drawn by the page's script from the leaderboard JSON embedded in the page.
It scrolls inside its own box, with the model column and the two header rows (benchmark
groups, then columns) kept in view; checkboxes choose the benchmarks shown, whether their
part columns (τ² domains, BFCL categories...) are shown, and whether the reported
(published) rows are, which also switches the bar plots to their variant without them
(a column no shown row has a value in is left out). Clicking a column header sorts by
it (again: the other direction). Each measured cell links to its log file and shows the
`inspect view` command for it on hover; every † and every cell with other runs of its
task gets a numbered note in the list under the table, for the rows and columns shown.
Under the notes, the reproduction gap of each released checkpoint scored here (a static
table, `leaderboard.gap`: measured − reported per column, the interval beneath, † / ? where
the settings differ from the paper's or it does not state them, numbered notes); then the
paper's ablations, as a table of their own (each number with its source), then which
aggregate each column is and what its cells are compared against. The failure taxonomy
lists example samples (log + sample id).
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from envs.jsonl import write_atomic
from leaderboard.columns import BENCHMARKS
from leaderboard.outputs import column_title, gap_columns, gap_marks, other_runs_text
from leaderboard.plots import Plot
from leaderboard.records import Leaderboard

__all__ = ["write_site"]

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
#controls{margin:.5rem 0;font-size:13px}
#controls label{margin-right:.9rem;white-space:nowrap}
#controls .sep{margin:0 .9rem;color:#aaa}
.scroll{overflow:auto;max-height:80vh;max-width:100%;border:1px solid #ccc}
table{border-collapse:separate;border-spacing:0;font-size:13px}
th,td{border-right:1px solid #ddd;border-bottom:1px solid #ddd;padding:3px 6px;
  text-align:right;white-space:nowrap;vertical-align:top;background:#fff}
#table thead th{background:#f0f0f0;position:sticky;top:0;z-index:2}
#table thead th.col{cursor:pointer;white-space:normal;min-width:5.5em;max-width:9em}
#table thead th.group{text-align:center;border-bottom:1px solid #bbb}
#table thead th.headline{background:#dde6f5}
.label{text-align:left}
#table .label{position:sticky;left:0;z-index:1;max-width:22em;
  overflow:hidden;text-overflow:ellipsis;border-right:2px solid #bbb}
#table thead th.label{z-index:3}
#table tr.reported td{color:#666;background:#fafafa}
#table td.incomparable{background:#fde9d9}
.ci{display:block;color:#777;font-size:11px}
.delta{color:#2a7a2a;font-size:11px}.neg{color:#b22}
sup{font-size:10px;color:#555}
#notes{font-size:12px;max-width:110em}#notes li{margin:2px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:8px;
  align-items:start}
.grid img{width:100%;border:1px solid #eee}
.wide{max-width:100%;border:1px solid #eee}
code{background:#f4f4f4;padding:1px 3px}
#taxonomy td,#ablations td{white-space:normal}
#ablations{margin:.3rem 0}#ablations-note{font-size:12px;max-width:110em}
#settings li{font-size:12px}
#gaps td.incomparable{background:#fde9d9}#gaps td.unconfirmed{background:#fdf6d9}
#gaps td .main{font-weight:600}
#gap-notes,#protocol-note{font-size:12px;max-width:110em}
"""

_JS = r"""
const board = JSON.parse(document.getElementById('board').textContent);
const logRel = JSON.parse(document.getElementById('logrel').textContent);
const groupNames = JSON.parse(document.getElementById('groups').textContent);
const otherRuns = JSON.parse(document.getElementById('others').textContent);
let sortKey = null, sortDir = -1;
const shown = {reported: true, parts: true, groups: {}};
for(const c of board.columns){shown.groups[c.benchmark] = true;}
function pct(v){return (100*v).toFixed(1);}
function base(p){return p.replace(/^.*\//, '');}
function span(cls, text){const s = document.createElement('span'); s.className = cls;
  s.textContent = text; return s;}
function visibleRows(){return board.rows.filter(r => shown.reported || r.kind !== 'reported');}
function visibleColumns(rows){
  return board.columns.filter(c => shown.groups[c.benchmark] && (shown.parts || c.headline)
    && rows.some(r => r.cells[c.key]));
}
function cellNode(cell, others, noteOf){
  const td = document.createElement('td');
  if(!cell){return td;}
  td.dataset.value = cell.value;
  const main = cell.reported ? (100*cell.value).toFixed(2)+' (rep.)' : pct(cell.value);
  const a = cell.logs.length ? document.createElement('a') : document.createElement('span');
  a.textContent = main;
  if(cell.logs.length){
    a.href = logRel[cell.logs[0]] || cell.logs[0];
    a.title = 'inspect view --log-dir ' + cell.logs[0].replace(/\/[^\/]*$/, '');
  }
  td.appendChild(a);
  if(cell.delta !== null){
    td.appendChild(span('delta' + (cell.delta < 0 ? ' neg' : ''),
      ' ('+(cell.delta>=0?'+':'')+(100*cell.delta).toFixed(2)+')'));
  }
  const marks = [];
  if(cell.note && (!cell.comparable || cell.reported)){marks.push(noteOf(cell.note));}
  if(others){marks.push(noteOf(others));}
  if(!cell.comparable){td.className = 'incomparable';
    td.appendChild(document.createTextNode(' †'));}
  if(marks.length){const s = document.createElement('sup');
    s.textContent = '[' + marks.join(',') + ']'; td.appendChild(s);}
  if(cell.note){td.title = cell.note;}
  if(!cell.reported && cell.ci_low !== null){
    td.appendChild(span('ci', '['+pct(cell.ci_low)+', '+pct(cell.ci_high)+'] n='+cell.n
      + (cell.epochs>1 ? '×'+cell.epochs : '')));
  }
  const passes = Object.entries(cell.pass_hat || {}).map(([k, v]) => k + ' ' + pct(v));
  if(passes.length > 1){td.appendChild(span('ci', passes.join(' ')));}
  return td;
}
function render(){
  const table = document.getElementById('table');
  table.innerHTML = '';
  let rows = visibleRows();
  const columns = visibleColumns(rows);
  const thead = document.createElement('thead');
  const groups = document.createElement('tr'); groups.className = 'groups';
  const heads = document.createElement('tr'); heads.className = 'cols';
  const corner = document.createElement('th'); corner.className = 'label'; corner.rowSpan = 2;
  corner.textContent = 'model'; corner.dataset.key = '__label'; groups.appendChild(corner);
  for(const c of columns){
    const last = groups.lastChild;
    if(last !== corner && last.dataset.benchmark === c.benchmark){last.colSpan += 1;}
    else{const g = document.createElement('th'); g.className = 'group';
      g.dataset.benchmark = c.benchmark; g.textContent = groupNames[c.benchmark] || c.benchmark;
      groups.appendChild(g);}
    const th = document.createElement('th');
    th.textContent = c.title + (sortKey===c.key ? (sortDir<0?' ▼':' ▲') : '');
    th.dataset.key = c.key; th.className = 'col' + (c.headline ? ' headline' : '');
    heads.appendChild(th);
  }
  thead.appendChild(groups); thead.appendChild(heads); table.appendChild(thead);
  [corner, ...heads.children].forEach(th => th.addEventListener('click', () => {
    const k = th.dataset.key;
    sortDir = (sortKey===k) ? -sortDir : (k==='__label' ? 1 : -1); sortKey = k; render();
  }));
  if(sortKey){
    rows = rows.slice().sort((a,b) => {
      if(sortKey==='__label'){return sortDir*a.label.localeCompare(b.label);}
      const x = a.cells[sortKey], y = b.cells[sortKey];
      if(!x && !y) return 0; if(!x) return 1; if(!y) return -1;
      return sortDir*(x.value - y.value);
    });
  }
  const notes = [], numbers = new Map();
  const tbody = document.createElement('tbody');
  for(const r of rows){
    const noteOf = text => {
      const key = r.label + ': ' + text;
      if(!numbers.has(key)){notes.push(key); numbers.set(key, notes.length);}
      return numbers.get(key);
    };
    const tr = document.createElement('tr'); tr.className = r.kind;
    const td = document.createElement('td'); td.className='label'; td.textContent = r.label;
    td.title = r.source || r.label;
    tr.appendChild(td);
    const others = otherRuns[r.key] || {};
    for(const c of columns){tr.appendChild(cellNode(r.cells[c.key], others[c.key], noteOf));}
    tbody.appendChild(tr);
  }
  table.appendChild(tbody);
  const top = groups.getBoundingClientRect().height;
  for(const th of heads.children){th.style.top = top + 'px';}
  const list = document.getElementById('notes');
  list.innerHTML = '';
  for(const n of notes){const li = document.createElement('li'); li.textContent = n;
    list.appendChild(li);}
  document.getElementById('notes-title').hidden = !notes.length;
  for(const img of document.querySelectorAll('#plots img')){
    const src = shown.reported ? img.dataset.all : img.dataset.measured;
    img.hidden = !src; if(src && img.getAttribute('src') !== src){img.src = src;}
  }
}
function controls(){
  const box = document.getElementById('controls');
  const add = (text, checked, change) => {
    const label = document.createElement('label'); const input = document.createElement('input');
    input.type = 'checkbox'; input.checked = checked;
    input.addEventListener('change', () => {change(input.checked); render();});
    label.appendChild(input); label.appendChild(document.createTextNode(' ' + text));
    box.appendChild(label); return input;
  };
  box.appendChild(document.createTextNode('Benchmarks: '));
  for(const b of Object.keys(shown.groups)){
    add(groupNames[b] || b, true, v => {shown.groups[b] = v;}).dataset.benchmark = b;
  }
  box.appendChild(span('sep', '|'));
  add('part columns', true, v => {shown.parts = v;}).id = 'show-parts';
  if(board.rows.some(r => r.kind === 'reported')){
    add('reported rows (paper)', true, v => {shown.reported = v;}).id = 'show-reported';
  }
}
controls();
render();
"""


def _taxonomy_html(board: Leaderboard, rel: dict[str, str]) -> str:
    if not board.taxonomy:
        return "<p>No failed samples were classified.</p>"
    out = ["<table id='taxonomy'><tr><th class='label'>model</th><th class='label'>"
           "benchmark</th><th class='label'>failure</th><th>count</th>"
           "<th class='label'>examples (log · sample)</th></tr>"]
    for t in board.taxonomy:
        links = " ".join(
            f"<a href='{html.escape(rel.get(e.log, e.log))}' title='{html.escape(e.detail)}'>"
            f"{html.escape(Path(e.log).name)} · {html.escape(e.sample_id)}</a>"
            for e in t.examples)
        out.append(f"<tr><td class='label'>{html.escape(t.row)}</td><td class='label'>"
                   f"{html.escape(t.benchmark)}</td><td class='label'>"
                   f"{html.escape(t.category)}</td><td>{t.count}</td>"
                   f"<td class='label'>{links}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _embed(data: object) -> str:
    return json.dumps(data).replace("</", "<\\/")


def _settings_html(board: Leaderboard) -> str:
    """Which aggregate each column is, and what each headline column's cells are
    compared against (and where that came from)."""
    items = []
    for c in board.columns:
        parts = []
        if c.aggregate:
            parts.append(f"aggregate: {html.escape(c.aggregate)}")
        if c.headline and c.reference:
            whence = ("the task as shipped (runs with no -T option, --limit or --sample-id)"
                      if c.reference_from == "defaults" else
                      "the settings most rows share (no run used the task's defaults)")
            shown = ", ".join(f"{k}={v}" for k, v in c.reference.items() if len(v) < 80)
            parts.append(f"{html.escape(whence)}: <code>{html.escape(shown)}</code>")
        if parts:
            items.append(f"<li><b>{html.escape(c.title)}</b>: {'; '.join(parts)}</li>")
    return "<ul id='settings'>" + "".join(items) + "</ul>" if items else ""


def _pp(value: float) -> str:
    return f"{100 * value:+.2f}".replace("-", "−")


def _gaps_html(board: Leaderboard, rel: dict[str, str]) -> str:
    """The reproduction-gap table (measured − reported per column, with the interval the
    measured cell's gives it), its numbered notes and what the paper says of its settings."""
    if not board.gaps:
        return ""
    columns = gap_columns(board)
    notes: list[str] = []
    body = []
    for gap in board.gaps:
        tds = []
        for c in columns:
            cell = gap.cells.get(c.key)
            if cell is None:
                tds.append("<td></td>")
                continue
            mark, numbers = gap_marks(cell, notes)
            css = {"†": "incomparable", "?": "unconfirmed"}.get(mark, "")
            value = html.escape(_pp(cell.gap))
            if cell.logs:
                value = (f"<a href='{html.escape(rel.get(cell.logs[0], cell.logs[0]))}'>"
                         f"{value}</a>")
            interval = (f"<span class='ci'>[{_pp(cell.gap_low)}, {_pp(cell.gap_high)}]</span>"
                        if cell.gap_low is not None and cell.gap_high is not None else "")
            runs = f"n={cell.n}" + (f"×{cell.epochs}" if cell.epochs > 1 else "")
            sup = f"<sup>[{','.join(map(str, numbers))}]</sup>" if numbers else ""
            tds.append(f"<td class='{css}'><span class='main'>{value}</span>"
                       f"{' ' + mark if mark else ''}{sup}{interval}<span class='ci'>"
                       f"{100 * cell.measured:.2f} {runs} vs {100 * cell.reported:.2f} rep."
                       f"</span></td>")
        revisions = ", ".join(r[:12] for r in gap.revisions) or "unrecorded"
        title = html.escape(gap.source or "")
        body.append(f"<tr><td class='label' title='{title}'>{html.escape(gap.label)}"
                    f"<span class='ci'>{html.escape(gap.hub_id)} @ {html.escape(revisions)}"
                    f" · reproduce: <code>{html.escape(gap.checkpoint_row)}</code></span></td>"
                    + "".join(tds) + "</tr>")
    heads = "".join(f"<th class='col{' headline' if c.headline else ''}'>"
                    f"{html.escape(c.title)}</th>" for c in columns)
    note_items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    protocol = (f"<p id='protocol-note'>{html.escape(board.protocol_note)}</p>"
                if board.protocol_note else "")
    return ("<h2>Reproduction gap</h2><p>Each released checkpoint scored here against the "
            "number its paper reports for it: measured − reported in percentage points, "
            "the measured cell's 95% interval minus the reported value beneath, then the "
            "two values. †: settings known to differ from the paper's; ?: settings the "
            "paper does not state; [n]: the notes below.</p><div class='scroll'>"
            "<table id='gaps'><thead><tr><th class='label'>checkpoint (measured − reported)"
            f"</th>{heads}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            f"<ol id='gap-notes'>{note_items}</ol>{protocol}")


def _ablations_html(board: Leaderboard) -> str:
    """The paper's ablations, one number per row with its source."""
    if not board.ablations:
        return ""
    rows = "".join(
        f"<tr><td class='label'>{html.escape(a.ablation)}</td>"
        f"<td class='label'>{html.escape(a.setting)}</td>"
        f"<td class='label'>{html.escape(a.size or 'not stated')}</td>"
        f"<td class='label'>{html.escape(column_title(board, a.column))}</td>"
        f"<td>{a.value:.2f}</td><td class='label'>{html.escape(a.source)}"
        + (f"; {html.escape(a.note)}" if a.note else "") + "</td></tr>"
        for a in board.ablations)
    note = f"<p id='ablations-note'>{html.escape(board.ablations_note)}</p>" \
        if board.ablations_note else ""
    return ("<h3>Ablations (reported)</h3><table id='ablations'><tr><th class='label'>"
            "ablation</th><th class='label'>setting</th><th class='label'>model</th>"
            "<th class='label'>benchmark</th><th>value (%)</th><th class='label'>source"
            f"</th></tr>{rows}</table>{note}")


def _images(plots: list[Plot], out: Path, css_class: str = "") -> str:
    def rel(path: Path | None) -> str:
        return html.escape(path.relative_to(out).as_posix()) if path is not None else ""

    return "\n".join(f"<img src='{rel(p.path)}' data-all='{rel(p.path)}' "
                     f"data-measured='{rel(p.measured_only)}' alt='{html.escape(p.path.stem)}'>"
                     if p.kind == "bars" else
                     f"<img class='{css_class}' src='{rel(p.path)}' "
                     f"alt='{html.escape(p.path.stem)}'>" for p in plots)


def write_site(board: Leaderboard, out: Path, plots: list[Plot]) -> Path:
    """`out/index.html` (replaced whole), linking the plots already under `out/plots/`."""
    logs = {p for r in board.rows for c in r.cells.values() for p in c.logs}
    logs |= {e.log for t in board.taxonomy for e in t.examples}
    logs |= {p for g in board.gaps for c in g.cells.values() for p in c.logs}
    rel = {p: os.path.relpath(Path(p).resolve(), out.resolve()) for p in logs}
    bars = [p for p in plots if p.kind == "bars"]
    curves = [p for p in plots if p.kind == "curve"]
    taxonomy = [p for p in plots if p.kind == "taxonomy"]
    skipped = "".join(f"<li>{html.escape(s.path)}: {html.escape(s.reason)}</li>"
                      for s in board.skipped)
    groups = {c.benchmark: BENCHMARKS.get(c.benchmark, c.benchmark) for c in board.columns}
    others = {r.key: {k: other_runs_text(c) for k, c in r.cells.items() if c.others}
              for r in board.rows}
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>envfactory leaderboard</title>
<style>{_CSS}</style></head><body>
<h1>Leaderboard</h1>
<p>Values in %. Measured cells: mean, then the 95% bootstrap interval over samples and n
samples (×epochs); a cell links to its log (hover for the <code>inspect view</code>
command). <b>(rep.)</b>: reported in {html.escape(board.baselines_source or "the paper")},
not measured here. (±x): delta against the matching base row. †: not comparable with the
rest of its column; [n]: see the numbered notes under the table. Click a header to sort.</p>
<div id="controls"></div>
<div class="scroll"><table id="table"></table></div>
<h3 id="notes-title">Notes</h3>
<ol id="notes"></ol>
{_gaps_html(board, rel)}
{_ablations_html(board)}
<h3>What each column compares</h3>
{_settings_html(board)}
<h2>Plots</h2>
<div id="plots" class="grid">{_images(bars, out)}</div>
{"<h2>Checkpoint curves</h2><div class='grid'>" + _images(curves, out) + "</div>"
 if curves else ""}
<h2>Failure taxonomy</h2>
{_images(taxonomy, out, "wide")}
{_taxonomy_html(board, rel)}
{"<h2>Logs left out</h2><ul>" + skipped + "</ul>" if skipped else ""}
<script type="application/json" id="board">{_embed(board.model_dump(mode="json"))}</script>
<script type="application/json" id="logrel">{_embed(rel)}</script>
<script type="application/json" id="groups">{_embed(groups)}</script>
<script type="application/json" id="others">{_embed(others)}</script>
<script>{_JS}</script>
</body></html>
"""
    path = out / "index.html"
    write_atomic(path, page)
    return path
