"""The ADMET panel's page (``GET /admet`` of ``graphnorm serve --admet``): plain HTML and a
little vanilla JavaScript, calling the app's own ``/admet/endpoints``, ``/admet/predict`` and
``/admet/draw``. One row per endpoint (its units and held-out score), one column per molecule
(the value, or the probability, the 90 % interval and the percentile among approved drugs);
molecules far from the training data
are marked. Clicking a value draws that molecule's atom attributions for that endpoint.
User text goes into the page as text (``textContent``), never as markup."""

from .page import COLOUR_NOTE, SHARED_JS

PANEL_HTML = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>graphnorm ADMET panel</title>
<link rel="icon" href="data:,">
<style>
 body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
 h1 { font-size: 1.3em; margin-bottom: .2em; }
 #info, .note { color: #666; font-size: .9em; }
 textarea { width: 100%; max-width: 56em; height: 6em; font-family: monospace; }
 button { padding: .4em 1.1em; margin: .6em 1em .6em 0; }
 #status.error { color: #b00020; }
 table { border-collapse: collapse; margin-top: .5em; }
 th, td { border: 1px solid #ddd; padding: .25em .5em; font-size: .85em; }
 th { background: #f4f4f4; max-width: 16em; word-break: break-all; font-family: monospace; }
 td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
 td.meta { color: #666; }
 .far { color: #8a6d00; font-family: system-ui, sans-serif; }
 .err { color: #b00020; font-family: system-ui, sans-serif; }
 td.pick { cursor: pointer; }
 td.pick:hover { background: #eef3ff; }
 #drawsvg svg { width: 360px; height: 290px; }
</style></head>
<body>
<h1>graphnorm: ADMET panel</h1>
<div id="info">loading the panel...</div>
<p class="note">Every endpoint shown held up on held-out molecules (whole scaffolds the model
never saw); its score there is listed beside it. Regression: value [90 % interval], in the
endpoint's units. Binary: probability. "pct 80": the value is higher than the panel predicts
for 80 % of approved drugs (when the panel has that reference). A molecule marked <span class="far">far from
training</span> lies outside what the model learned from: trust it less. Click a value to
draw that molecule's atom attributions for the endpoint: """ + COLOUR_NOTE + r"""; a score is
the change the atom makes to the value (in the endpoint's units) or to the calibrated
log-odds of the probability.</p>
<textarea id="smiles" placeholder="CCO&#10;c1ccccc1O&#10;CC(=O)Nc1ccc(O)cc1"></textarea><br>
<button id="predict">Predict</button><button id="download" disabled>Download CSV</button>
<div id="status"></div>
<table id="panel" hidden><thead></thead><tbody></tbody></table>
<div id="drawing" hidden><p id="drawcaption" class="note"></p><div id="drawsvg"></div></div>
<script>
"use strict";
""" + SHARED_JS + r"""const SHOWN = 8;  // molecules shown side by side; the CSV holds every one
let endpoints = [], last = null, drawn = 0;
const $ = (id) => document.getElementById(id);
const fmt = (v) => v === null || v === undefined ? "" : Number(v).toPrecision(3);

function status(text, isError) { $("status").textContent = text; $("status").className = isError ? "error" : ""; }

function cell(tr, text, cls, tag) {
  const td = document.createElement(tag || "td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function render(result) {
  last = result;
  $("drawing").hidden = true;  // a drawing of the last table's molecules
  const mols = result.rows.slice(0, SHOWN);
  const head = document.createElement("tr");
  for (const name of ["endpoint", "units", "held-out score (n)"]) cell(head, name, null, "th");
  for (const m of mols) {
    const th = cell(head, m.smiles, null, "th");
    if (m.error) { th.appendChild(document.createElement("br")); th.appendChild(Object.assign(document.createElement("span"), {className: "err", textContent: m.error})); }
    else if (m.warning || m.far_from_training) { th.appendChild(document.createElement("br")); th.appendChild(Object.assign(document.createElement("span"), {className: "far", textContent: m.warning || "far from training"})); }
  }
  $("panel").tHead.replaceChildren(head);
  const body = $("panel").tBodies[0];
  body.replaceChildren();
  for (const e of endpoints) {
    const tr = document.createElement("tr");
    cell(tr, e.task);
    cell(tr, e.kind === "binary" ? "probability" : e.units, "meta");
    cell(tr, `${e.metric} ${fmt(e.score)} (${e.n})`, "meta");
    for (const m of mols) {
      const v = m[e.task];
      const p = m[e.task + "_percentile"];  // where it stands among approved drugs, if known
      const text = v === null || v === undefined ? "" : (e.kind === "binary" ? fmt(v) :
        `${fmt(v)} [${fmt(m[e.task + "_lo"])}, ${fmt(m[e.task + "_hi"])}]`) +
        (p === null || p === undefined ? "" : ` · pct ${Math.round(p)}`);
      const td = cell(tr, text, "num");
      if (!m.error) {
        td.className = "num pick";
        td.title = "click: atom attributions";
        td.addEventListener("click", () => drawAtoms(m.smiles, e.task));
      }
    }
    body.appendChild(tr);
  }
  $("panel").hidden = false;
  $("download").disabled = false;
  const failed = result.rows.filter((r) => r.error).length;
  const more = result.rows.length > SHOWN ? `; the table shows the first ${SHOWN}, the CSV all` : "";
  status(`${result.rows.length} molecules, ${failed} failed${more}`, false);
}

async function drawAtoms(smiles, endpoint) {
  const asked = ++drawn;  // a later click wins over an answer still on its way
  $("drawing").hidden = false;
  $("drawcaption").textContent = `drawing ${endpoint} for ${smiles}...`;
  $("drawsvg").replaceChildren();
  try {
    const out = await api("/admet/draw", {method: "POST", headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify({smiles: [smiles], target: endpoint})});
    if (asked !== drawn) return;
    $("drawcaption").textContent = `${endpoint} of ${smiles}: ${out.method}, atom score = ${out.score}`;
    showDrawing($("drawsvg"), out.drawings[0]);
  } catch (err) { if (asked === drawn) $("drawcaption").textContent = `drawing failed: ${err.message}`; }
}

async function predict() {
  const smiles = $("smiles").value.split("\n").map((s) => s.trim()).filter((s) => s);
  if (!smiles.length) { status("paste at least one SMILES", true); return; }
  $("predict").disabled = true;
  status("predicting...", false);
  try {
    render(await api("/admet/predict", {method: "POST", headers: {"Content-Type": "application/json"},
                                        body: JSON.stringify({smiles: smiles})}));
  } catch (err) { status(err.message, true); } finally { $("predict").disabled = false; }
}

function download() {
  if (!last) return;
  const lines = [last.columns.map(csvField).join(",")];
  for (const row of last.rows) lines.push(last.columns.map((c) => csvField(row[c])).join(","));
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([lines.join("\n") + "\n"], {type: "text/csv"}));
  a.download = "admet_panel.csv";
  a.click();
  URL.revokeObjectURL(a.href);
}

async function start() {
  try {
    endpoints = await api("/admet/endpoints");
    $("info").textContent = `${endpoints.length} endpoints`;
  } catch (err) { $("info").textContent = `panel unavailable: ${err.message}`; }
}

$("predict").addEventListener("click", predict);
$("download").addEventListener("click", download);
start();
</script>
</body></html>
"""
