"""The static HTML page: one `index.html` (inline CSS and plain JS, nothing fetched, so it
opens from disk offline) beside `plots/`.

The table is drawn by the page's script from the leaderboard JSON embedded in the page;
clicking a column header sorts by it (again: the other direction). Each measured cell
links to its log file and shows the `inspect view` command for it on hover; the failure
taxonomy lists example samples (log + sample id).
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from leaderboard.records import Leaderboard

__all__ = ["write_site"]

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;font-size:13px;margin:1rem 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f0f0f0;cursor:pointer;position:sticky;top:0}
th.headline{background:#dde6f5}
td.label,th.label{text-align:left}
tr.reported td{color:#666;background:#fafafa}
td.incomparable{background:#fde9d9}
.ci{color:#777;font-size:11px}.delta{color:#2a7a2a;font-size:11px}.neg{color:#b22}
img{max-width:48%;margin:4px;border:1px solid #eee}
code{background:#f4f4f4;padding:1px 3px}
#taxonomy td{white-space:normal}
"""

_JS = r"""
const board = JSON.parse(document.getElementById('board').textContent);
const logRel = JSON.parse(document.getElementById('logrel').textContent);
let sortKey = null, sortDir = -1;
function pct(v){return (100*v).toFixed(1);}
function cellNode(cell){
  const td = document.createElement('td');
  if(!cell){return td;}
  td.dataset.value = cell.value;
  let main = cell.reported ? (100*cell.value).toFixed(2)+' (rep.)' : pct(cell.value);
  const a = cell.logs.length ? document.createElement('a') : document.createElement('span');
  a.textContent = main;
  if(cell.logs.length){
    a.href = logRel[cell.logs[0]] || cell.logs[0];
    a.title = 'inspect view --log-dir ' + cell.logs[0].replace(/\/[^\/]*$/, '');
  }
  td.appendChild(a);
  if(!cell.reported && cell.ci_low !== null){
    const s = document.createElement('span'); s.className='ci';
    s.textContent = ' ['+pct(cell.ci_low)+', '+pct(cell.ci_high)+'] n='+cell.n
      + (cell.epochs>1 ? '×'+cell.epochs : '');
    td.appendChild(s);
  }
  if(cell.delta !== null){
    const d = document.createElement('span');
    d.className = 'delta' + (cell.delta < 0 ? ' neg' : '');
    d.textContent = ' ('+(cell.delta>=0?'+':'')+(100*cell.delta).toFixed(2)+')';
    td.appendChild(d);
  }
  const passes = Object.entries(cell.pass_hat || {}).map(([k, v]) => k + ' ' + pct(v));
  if(passes.length > 1){
    const s = document.createElement('span'); s.className = 'ci';
    s.textContent = ' ' + passes.join(' '); td.appendChild(s);
  }
  if(!cell.comparable){td.className='incomparable'; td.title = cell.note || '';
    td.appendChild(document.createTextNode(' †'));}
  else if(cell.note){td.title = cell.note;}
  return td;
}
function render(){
  const table = document.getElementById('table');
  table.innerHTML = '';
  const head = document.createElement('tr');
  const th0 = document.createElement('th'); th0.textContent='model'; th0.className='label';
  th0.dataset.key = '__label'; head.appendChild(th0);
  for(const c of board.columns){
    const th = document.createElement('th');
    th.textContent = c.title + (sortKey===c.key ? (sortDir<0?' ▼':' ▲') : '');
    th.dataset.key = c.key;
    if(c.headline){th.className='headline';}
    head.appendChild(th);
  }
  head.querySelectorAll('th').forEach(th => th.addEventListener('click', () => {
    const k = th.dataset.key;
    sortDir = (sortKey===k) ? -sortDir : (k==='__label' ? 1 : -1); sortKey = k; render();
  }));
  table.appendChild(head);
  const rows = board.rows.slice();
  if(sortKey){
    rows.sort((a,b) => {
      if(sortKey==='__label'){return sortDir*a.label.localeCompare(b.label);}
      const x = a.cells[sortKey], y = b.cells[sortKey];
      if(!x && !y) return 0; if(!x) return 1; if(!y) return -1;
      return sortDir*(x.value - y.value);
    });
  }
  for(const r of rows){
    const tr = document.createElement('tr'); tr.className = r.kind;
    const td = document.createElement('td'); td.className='label'; td.textContent = r.label;
    if(r.source){td.title = r.source;}
    tr.appendChild(td);
    for(const c of board.columns){tr.appendChild(cellNode(r.cells[c.key]));}
    table.appendChild(tr);
  }
}
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


def write_site(board: Leaderboard, out: Path, plots: list[Path]) -> Path:
    """`out/index.html`, linking the plots already written under `out/plots/`."""
    out.mkdir(parents=True, exist_ok=True)
    logs = {p for r in board.rows for c in r.cells.values() for p in c.logs}
    logs |= {e.log for t in board.taxonomy for e in t.examples}
    rel = {p: os.path.relpath(Path(p).resolve(), out.resolve()) for p in logs}
    images = "\n".join(f"<img src='{html.escape(p.relative_to(out).as_posix())}' "
                       f"alt='{html.escape(p.stem)}'>" for p in plots)
    skipped = "".join(f"<li>{html.escape(s.path)}: {html.escape(s.reason)}</li>"
                      for s in board.skipped)
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>envfactory leaderboard</title>
<style>{_CSS}</style></head><body>
<h1>Leaderboard</h1>
<p>Values in %. Measured cells: mean, 95% bootstrap interval over samples, n samples
(×epochs); a cell links to its log (hover for the <code>inspect view</code> command).
<b>(rep.)</b>: reported in {html.escape(board.baselines_source or "the paper")}, not measured
here. (±x): delta against the matching base row. †: not comparable with the rest of its
column (hover for the settings that differ). Click a header to sort.</p>
<table id="table"></table>
<h2>Plots</h2>
<div id="plots">{images}</div>
<h2>Failure taxonomy</h2>
{_taxonomy_html(board, rel)}
{"<h2>Logs left out</h2><ul>" + skipped + "</ul>" if skipped else ""}
<script type="application/json" id="board">{_embed(board.model_dump(mode="json"))}</script>
<script type="application/json" id="logrel">{_embed(rel)}</script>
<script>{_JS}</script>
</body></html>
"""
    path = out / "index.html"
    path.write_text(page, encoding="utf-8")
    return path
