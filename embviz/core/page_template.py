"""The interactive page's HTML and script: Plotly's own script inlined, the data inlined as
JSON, so the file opens with no network at all (a classroom laptop offline, a USB stick)."""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

from embviz.core.export_page import payload_json


@lru_cache(maxsize=1)
def plotly_script() -> str:
    """plotly.min.js as the installed plotly package ships it (4.6 MB; read once a process)."""
    from plotly.offline import get_plotlyjs

    script: str = get_plotlyjs()
    return script


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 1em; color: #222; }
header h1 { font-size: 1.3em; margin: .5em 0 .2em; }
header p { margin: .15em 0; font-size: .9em; color: #444; }
#row { display: flex; gap: 1em; align-items: flex-start; }
#map { flex: 1 1 auto; height: 80vh; min-width: 300px; }
#side { flex: 0 0 20em; font-size: .9em; }
#side table { border-collapse: collapse; width: 100%; }
#side td { padding: 1px 4px; border-bottom: 1px solid #eee; }
#side td.score { text-align: right; font-variant-numeric: tabular-nums; }
#search { width: 100%; font-size: 1em; padding: 3px; box-sizing: border-box; }
#logits { height: 50vh; }
code { font-size: .9em; }
"""

# Plain script: decodes the typed arrays, draws one WebGL trace per token kind (the key),
# answers clicks with the stored neighbours and the search box with the point zoomed.
_SCRIPT = r"""
(function () {
  const data = JSON.parse(document.getElementById('embviz-data').textContent);
  function bytes(b64) {
    const s = atob(b64), out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out.buffer;
  }
  const api = { data: data };
  window.embviz = api;
  const m = data.map;
  if (m) {
    const x = new Float32Array(bytes(m.x)), y = new Float32Array(bytes(m.y));
    const kinds = new Uint8Array(bytes(m.kinds)), labels = m.labels;
    const members = m.kind_names.map(() => []);
    for (let i = 0; i < m.rows; i++) members[kinds[i]].push(i);
    const traces = [], traceMembers = [];
    members.forEach((idx, k) => {
      if (!idx.length) return;
      const tx = new Float32Array(idx.length), ty = new Float32Array(idx.length), tt = new Array(idx.length);
      idx.forEach((i, j) => { tx[j] = x[i]; ty[j] = y[i]; tt[j] = labels[i]; });
      traces.push({ type: 'scattergl', mode: 'markers', name: m.kind_names[k] + ' (' + idx.length.toLocaleString('en') + ')',
                    x: tx, y: ty, text: tt, hovertemplate: '%{text}<extra></extra>',
                    marker: { size: 3, color: m.kind_colours[k], opacity: 0.6 } });
      traceMembers.push(idx);
    });
    const chosen = traces.length;
    traces.push({ type: 'scattergl', mode: 'markers+text', name: 'chosen', x: [], y: [], text: [],
                  textposition: 'top center', hoverinfo: 'skip', showlegend: false,
                  marker: { size: 14, color: 'rgba(0,0,0,0)', line: { color: '#000', width: 2 } } });
    const gd = document.getElementById('map');
    Plotly.newPlot(gd, traces, {
      margin: { l: 40, r: 10, t: 10, b: 40 }, hovermode: 'closest', dragmode: 'zoom',
      legend: { itemsizing: 'constant', orientation: 'h', y: -0.08 },
      xaxis: { zeroline: false }, yaxis: { zeroline: false, scaleanchor: 'x' },
    }, { responsive: true, displaylogo: false, scrollZoom: true });
    const nb = m.neighbours && {
      k: m.neighbours.k,
      positions: new Int32Array(bytes(m.neighbours.positions)),
      thousandths: new Int16Array(bytes(m.neighbours.thousandths)),
    };
    const side = document.getElementById('neighbours');
    function esc(s) { const d = document.createElement('div'); d.textContent = s; return d.innerHTML; }
    function choose(i, zoom) {
      Plotly.restyle(gd, { x: [[x[i]]], y: [[y[i]]], text: [[labels[i]]] }, [chosen]);
      if (zoom) {
        const xr = gd.layout.xaxis.range, yr = gd.layout.yaxis.range;
        const w = (xr[1] - xr[0]) / 8, h = (yr[1] - yr[0]) / 8;
        Plotly.relayout(gd, { 'xaxis.range': [x[i] - w, x[i] + w], 'yaxis.range': [y[i] - h, y[i] + h] });
      }
      if (!nb) { side.innerHTML = '<p>' + esc(labels[i]) + '</p>'; return; }
      let rows = '';
      for (let j = 0; j < nb.k; j++) {
        const p = nb.positions[i * nb.k + j];
        rows += '<tr><td>' + (j + 1) + '</td><td class="token">' + esc(labels[p]) + '</td><td class="score">'
              + (nb.thousandths[i * nb.k + j] / 1000).toFixed(3) + '</td></tr>';
      }
      side.innerHTML = '<p>The ' + nb.k + ' nearest rows to <b class="query">' + esc(labels[i])
                     + '</b> by cosine, over every dimension of the table:</p><table>' + rows + '</table>';
    }
    gd.on('plotly_click', function (ev) {
      const p = ev && ev.points && ev.points[0];
      if (!p || p.curveNumber === chosen) return;
      choose(traceMembers[p.curveNumber][p.pointIndex !== undefined ? p.pointIndex : p.pointNumber], false);
    });
    const byLabel = new Map();
    labels.forEach((l, i) => { if (!byLabel.has(l)) byLabel.set(l, i); });
    function find(word) {
      // As the window reads a typed word: a bare word means the mid-sentence token (␣Paris) when there is one.
      const w = word.replace(/ /g, '\u2423');
      if (!w) return -1;
      if (!w.startsWith('\u2423') && byLabel.has('\u2423' + w)) return byLabel.get('\u2423' + w);
      if (byLabel.has(w)) return byLabel.get(w);
      const lower = w.toLowerCase();
      for (let i = 0; i < labels.length; i++) if (labels[i].toLowerCase() === lower) return i;
      return -1;
    }
    const status = document.getElementById('search-status');
    const ids = new Int32Array(bytes(m.ids));
    function search(word) {
      // A leading space is kept (it is part of the token); one typed after the word is not.
      const i = find(word.replace(/\s+$/, ''));
      if (i < 0) { status.textContent = 'No token ' + word + ' in this vocabulary.'; return -1; }
      status.textContent = 'Found ' + labels[i] + ' (id ' + ids[i] + ').';
      choose(i, true);
      return i;
    }
    document.getElementById('search').addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter') search(this.value);
    });
    Object.assign(api, { gd: gd, x: x, y: y, labels: labels, traceMembers: traceMembers, choose: choose, search: search });
  }
  const lg = data.logits;
  if (lg) {
    const bars = lg.bars.slice().reverse();
    Plotly.newPlot('logits', [{ type: 'bar', orientation: 'h', x: bars.map(b => b.prob), y: bars.map(b => b.label),
                                text: bars.map(b => (100 * b.prob).toFixed(1) + '%'), textposition: 'auto',
                                hovertemplate: '%{y}: p %{x:.4f}<extra></extra>', marker: { color: '#0072B2' } }],
                   { margin: { l: 120, r: 10, t: 10, b: 40 }, xaxis: { title: { text: 'probability of the next token' } },
                     yaxis: { type: 'category', automargin: true } },
                   { responsive: true, displaylogo: false });
  }
})();
"""


def _header(payload: dict[str, Any]) -> str:
    e = html.escape
    fp = payload["fingerprint"]
    lines = [f"<h1>{e(payload['model'])}</h1>",
             f"<p>{payload['vocab_size']:,} rows × {payload['dim']:,} dimensions; fingerprint "
             f"<code>vocab sha256 {e(fp['vocab_sha256'][:16])}…</code>, row lengths "
             f"<code>{e(', '.join('–' if n is None else f'{n:.3f}' for n in fp['probe_norms'][:4]))}…</code></p>"]
    if "map" in payload:
        lines.append(f"<p id=\"caption\">{e(payload['map']['caption'])}</p>")
    lines += [f"<p class=\"note\">{e(n)}</p>" for n in payload["notes"] + payload.get("map", {}).get("notes", [])]
    return "\n".join(lines)


def render_page(payload: dict[str, Any]) -> str:
    """The whole page, every script inlined: it fetches nothing."""
    e = html.escape
    body = [f"<header>{_header(payload)}</header>"]
    if "map" in payload:
        side = ("<input id=\"search\" type=\"search\" placeholder=\"find a token: Paris, ␣Paris, ing…\">"
                "<p id=\"search-status\"></p><div id=\"neighbours\"><p>Click a point: its nearest rows are listed here."
                "</p></div>")
        body.append(f"<div id=\"row\"><div id=\"map\"></div><div id=\"side\">{side}</div></div>")
    if "logits" in payload:
        lg = payload["logits"]
        how = "the output head alone (no blocks)" if lg["path"] == "direct" else "the full model"
        body.append(f"<h2>After “{e(lg['text'])}”: the next token, by {how}</h2>"
                    f"<p>Tokens: {e(' | '.join(lg['tokens']))}</p>"
                    + "".join(f"<p class=\"note\">{e(n)}</p>" for n in lg["notes"]) + "<div id=\"logits\"></div>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(payload['model'])} — embviz</title><style>{_STYLE}</style>"
            f"<script>{plotly_script()}</script></head><body>\n" + "\n".join(body)
            + f"\n<script type=\"application/json\" id=\"embviz-data\">{payload_json(payload)}</script>"
            f"\n<script>{_SCRIPT}</script>\n</body></html>\n")
