"""Drive `graphnorm serve`'s page in a real headless Chromium (Playwright, Debian's chromium).

Starts the server on a free port with a checkpoint, pastes SMILES (one invalid), clicks
Predict, waits for the table and the attribution drawings, downloads the CSV, uploads a CSV
file through the file input, and writes a screenshot and a JSON of what the page showed.
A dev check: Playwright is not a package dependency (`pip install playwright`; no
`playwright install`, the system's /usr/bin/chromium is used).

    python experiments/serve_browser_check.py \
        --checkpoint runs/explain-faithfulness/graphormer-e40-s0 --out experiments/results/serve
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PASTED = ["CC(=O)Nc1ccc(O)cc1", "c1ccccc1O", "CCN(CC)C(=O)c1ccccc1", "not a smiles",
          "O=C(O)c1ccccc1OC(C)=O", "CCOC(=O)N1CCC(=C2c3ccc(Cl)cc3CCc3cccnc32)CC1"]
# table cells as text; a drawn molecule as "[svg]"
ROW_CELLS = ("trs => trs.map(tr => Array.from(tr.cells).map("
             "td => td.querySelector('svg') ? '[svg]' : td.textContent.slice(0, 80)))")
UPLOADED = b"id,smiles\nA,CCO\nB,C1CC\nC,Oc1ccc(Cl)cc1\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(checkpoint: str, port: int) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "graphnorm.cli", "serve", "--checkpoint",
                             checkpoint, "--port", str(port)], env=env)
    deadline = time.time() + 90
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return proc
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                raise RuntimeError("graphnorm serve did not start")
            time.sleep(0.3)


def drive(url: str, out: Path) -> dict:
    from playwright.sync_api import sync_playwright

    report: dict = {"console_errors": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        report["chromium"] = browser.version
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page.on("console", lambda m: m.type == "error" and report["console_errors"].append(m.text))
        page.on("pageerror", lambda e: report["console_errors"].append(str(e)))
        page.goto(url)
        page.wait_for_function("document.getElementById('info').textContent.includes('targets')")
        report["info_line"] = page.text_content("#info")
        page.fill("#smiles", "\n".join(PASTED))
        start = time.perf_counter()
        page.click("#predict")
        page.wait_for_selector("#results tbody tr", timeout=60_000)
        page.wait_for_function(  # every valid row drawn
            f"document.querySelectorAll('#results td.mol svg').length >= {len(PASTED) - 1}",
            timeout=60_000)
        report["seconds_to_table_and_drawings"] = round(time.perf_counter() - start, 2)
        report["header"] = page.eval_on_selector_all("#results thead th", "ths => ths.map(t => t.textContent)")
        report["rows"] = page.eval_on_selector_all(
            "#results tbody tr", ROW_CELLS)
        report["drawings"] = page.eval_on_selector_all("#results td.mol svg", "s => s.length")
        report["status"] = page.text_content("#status")
        out.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out / "screenshot.png"), full_page=True)
        with page.expect_download() as dl:
            page.click("#download")
        csv_path = out / "downloaded.csv.tmp"
        dl.value.save_as(csv_path)
        report["downloaded_csv_lines"] = csv_path.read_text().splitlines()
        csv_path.unlink()
        page.set_input_files("#file", files=[{"name": "mols.csv", "mimeType": "text/csv",
                                              "buffer": UPLOADED}])
        page.click("#predict")
        page.wait_for_function("document.getElementById('status').textContent.startsWith('3 rows')",
                               timeout=60_000)
        report["upload_rows"] = page.eval_on_selector_all(
            "#results tbody tr", ROW_CELLS)
        browser.close()
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", default="runs/explain-faithfulness/graphormer-e40-s0")
    p.add_argument("--out", default="experiments/results/serve")
    args = p.parse_args(argv)
    from graphnorm.provenance import git_sha

    port = free_port()
    server = start_server(args.checkpoint, port)
    try:
        report = drive(f"http://127.0.0.1:{port}/", Path(args.out))
    finally:
        server.terminate()
        server.wait(timeout=20)
    rows, uploads = report["rows"], report["upload_rows"]
    checks = {
        "table rows = pasted SMILES": len(rows) == len(PASTED),
        "invalid SMILES shows its error in its row": "cannot parse" in " ".join(rows[3]),
        "every valid row drawn": report["drawings"] == len(PASTED) - 1,
        "CSV has a header and every row": len(report["downloaded_csv_lines"]) == len(PASTED) + 1,
        "upload rows named by line": [r[1] for r in uploads] == ["line 2", "line 3", "line 4"],
        "no console errors": not report["console_errors"],
    }
    report.update(command="python experiments/serve_browser_check.py " + " ".join(argv or sys.argv[1:]),
                  git_sha=git_sha(), checkpoint=args.checkpoint, checks=checks,
                  passed=all(checks.values()))
    (Path(args.out) / "browser_check.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(checks, indent=1))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
