"""The page of ``graphnorm serve``: plain HTML and a little vanilla JavaScript, no build step.

It calls the app's own JSON API (``/health``, ``/predict``, ``/upload``, ``/draw``), so what
the page shows is what API clients get. User text goes into the page as text (``textContent``),
never as markup; the SVG drawings come from the server's RDKit.
"""

# what the colours of both pages' drawings mean (graphnorm/explain/draw.py)
COLOUR_NOTE = ("red atoms raise the prediction, blue atoms lower it (per-atom attributions; "
               "colours compare atoms within one molecule)")

# what both pages' scripts need: the JSON API with its {"detail"} errors, CSV cells, and a
# drawing of /draw or /admet/draw put into the page
SHARED_JS = r"""async function api(path, options) {
  const response = await fetch(path, options);
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (!response.ok) {
    let detail = body && body.detail !== undefined ? body.detail : response.statusText;
    if (typeof detail !== "string") detail = JSON.stringify(detail);
    throw new Error(`HTTP ${response.status}: ${detail}`);
  }
  return body;
}

function csvField(v) {
  const s = v === null || v === undefined ? "" : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function showDrawing(element, drawing) {
  if (drawing.svg) element.innerHTML = drawing.svg;  // RDKit's SVG from this server
  else element.textContent = drawing.error || "";
}
"""

PAGE_HTML = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>graphnorm predictions</title>
<link rel="icon" href="data:,">
<style>
 body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
 h1 { font-size: 1.3em; margin-bottom: .2em; }
 #info, .note { color: #666; font-size: .9em; }
 textarea { width: 100%; max-width: 56em; height: 8em; font-family: monospace; }
 .controls { margin: .6em 0; display: flex; gap: 1em; align-items: center; flex-wrap: wrap; }
 button { padding: .4em 1.1em; }
 #status { margin: .5em 0; min-height: 1.2em; }
 #status.error { color: #b00020; }
 table { border-collapse: collapse; margin-top: .5em; }
 th, td { border: 1px solid #ddd; padding: .25em .5em; font-size: .9em; vertical-align: middle; }
 th { background: #f4f4f4; }
 td.smiles { font-family: monospace; max-width: 22em; word-break: break-all; }
 td.num { text-align: right; font-variant-numeric: tabular-nums; }
 td.err { color: #b00020; max-width: 26em; }
 td.warn { color: #8a6d00; }
 td.mol svg { width: 180px; height: 145px; }
</style></head>
<body>
<h1>graphnorm: molecular property predictions</h1>
<div id="info">loading model information...</div>
<p class="note">Paste SMILES (one per line) or upload a .csv / .tsv (a <code>smiles</code>
column), .smi / .txt or .sdf file. Drawings: """ + COLOUR_NOTE + r""".</p>
<textarea id="smiles" placeholder="CCO&#10;c1ccccc1O&#10;CC(=O)Nc1ccc(O)cc1"></textarea>
<div class="controls">
 <button id="predict">Predict</button>
 <label>or upload a file <input type="file" id="file" accept=".csv,.tsv,.smi,.txt,.sdf,.gz"></label>
 <label id="targetbox" hidden>drawings for <select id="target"></select></label>
 <button id="download" disabled>Download CSV</button>
</div>
<div id="status"></div>
<table id="results" hidden><thead></thead><tbody></tbody></table>
<script>
"use strict";
""" + SHARED_JS + r"""const SHOWN = 500;  // table rows shown; the CSV holds every row
let info = null, last = null;
const $ = (id) => document.getElementById(id);

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function fmt(v) { return v === null || v === undefined ? "" : Number(v).toPrecision(4); }

function render(result) {
  last = result;
  const valueCols = result.columns.filter(
    (c) => !["row", "smiles", "error", "warning"].includes(c));
  const head = document.createElement("tr");
  for (const name of ["#", ...(result.columns.includes("row") ? ["row"] : []), "smiles",
                      "molecule", ...valueCols, "error / warning"]) {
    const th = document.createElement("th");
    th.textContent = name;
    head.appendChild(th);
  }
  $("results").tHead.replaceChildren(head);
  const body = $("results").tBodies[0];
  body.replaceChildren();
  result.rows.slice(0, SHOWN).forEach((row, i) => {
    const tr = document.createElement("tr");
    tr.dataset.index = i;
    cell(tr, i + 1);
    if ("row" in row) cell(tr, row.row);
    cell(tr, row.smiles, "smiles");
    cell(tr, "", "mol");
    for (const c of valueCols) cell(tr, fmt(row[c]), "num");
    if (row.error) cell(tr, row.error, "err");
    else cell(tr, row.warning || "", "warn");
    body.appendChild(tr);
  });
  $("results").hidden = false;
  $("download").disabled = false;
  const failed = result.rows.filter((r) => r.error).length;
  const more = result.rows.length > SHOWN ? `; table shows the first ${SHOWN}, the CSV all` : "";
  setStatus(`${result.rows.length} rows, ${failed} failed${more}`, false);
  drawMolecules();
}

async function drawMolecules() {
  if (!last || !info) return;
  const rows = Array.from($("results").tBodies[0].rows);
  const todo = rows.filter((tr) => !last.rows[tr.dataset.index].error)
                   .slice(0, info.limits.max_drawn);
  if (!todo.length) return;
  const smiles = todo.map((tr) => last.rows[tr.dataset.index].smiles);
  try {
    const out = await api("/draw", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({smiles: smiles, target: $("target").value || null})});
    out.drawings.forEach((d, k) => showDrawing(todo[k].querySelector("td.mol"), d));
  } catch (err) { setStatus(`drawings failed: ${err.message}`, true); }
}

async function predict() {
  const file = $("file").files[0];
  $("predict").disabled = true;
  setStatus("predicting...", false);
  try {
    if (file) {
      const form = new FormData();
      form.append("file", file, file.name);
      render(await api("/upload", {method: "POST", body: form}));
    } else {
      const smiles = $("smiles").value.split("\n").map((s) => s.trim()).filter((s) => s);
      if (!smiles.length) { setStatus("paste at least one SMILES, or choose a file", true); return; }
      render(await api("/predict", {method: "POST", headers: {"Content-Type": "application/json"},
                                    body: JSON.stringify({smiles: smiles})}));
    }
  } catch (err) {
    setStatus(err.message, true);
  } finally { $("predict").disabled = false; }
}

function download() {
  if (!last) return;
  const lines = [last.columns.map(csvField).join(",")];
  for (const row of last.rows) lines.push(last.columns.map((c) => csvField(row[c])).join(","));
  const blob = new Blob([lines.join("\n") + "\n"], {type: "text/csv"});
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = "predictions.csv";
  a.click();
  URL.revokeObjectURL(a.href);
}

async function start() {
  try {
    info = await api("/health");
    const std = info.models > 1 ? ` (ensemble of ${info.models}: mean and _std)` : "";
    $("info").textContent = `${info.task} model, targets: ${info.targets.join(", ")}${std}; ` +
      `attributions: ${info.attribution_method}` +
      (info.attribution_note ? ` (${info.attribution_note})` : "") + `; at most ${info.limits.max_smiles} SMILES per request`;
    for (const t of info.targets) {
      const o = document.createElement("option");
      o.value = o.textContent = t;
      $("target").appendChild(o);
    }
    $("targetbox").hidden = info.targets.length < 2;
  } catch (err) { $("info").textContent = `model information unavailable: ${err.message}`; }
}

$("predict").addEventListener("click", predict);
$("download").addEventListener("click", download);
$("target").addEventListener("change", drawMolecules);
$("file").addEventListener("change", () => { if ($("file").files.length) setStatus(`file: ${$("file").files[0].name}`, false); });
start();
</script>
</body></html>
"""
