"""CPU ms per row of ``Predictor.predict_rows`` in one process (start-up and model loading
excluded), for before/after comparisons on a busy machine: run it alternately with two
checkouts on the path, e.g.

    for code in /tmp/old /work/wt36; do PYTHONPATH=$code OMP_NUM_THREADS=1 \\
        python experiments/bench_predict_rows.py /tmp/bench_screening/graph; done

Rows: ZINC250k training SMILES 300..800 (after 20 warm-up rows). The whole-command figures of
bench_screening.py include start-up, which varies with the load.
"""
import gzip
import os
import sys
import time
from pathlib import Path

RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR", Path(__file__).resolve().parents[2] / "shared" / "datasets"))


def main(checkpoint: str, rows: int = 500) -> None:
    import graphnorm
    import torch
    from rdkit import RDLogger

    from graphnorm.inference.predict import load_predictor

    RDLogger.DisableLog("rdApp.*")
    torch.set_num_threads(1)
    with gzip.open(RAW / "zinc" / "jtvae_train.txt.gz", "rt") as f:
        smiles = [line.strip() for _, line in zip(range(300 + rows), f)][300:]
    predictor = load_predictor(checkpoint)
    predictor.predict_rows(smiles[:20])
    start = time.process_time()
    predictor.predict_rows(smiles)
    cpu = time.process_time() - start
    print(f"{Path(graphnorm.__file__).parents[1]} {checkpoint}: {1e3 * cpu / rows:.2f} CPU ms/row "
          f"({rows / cpu:.0f} rows per CPU-s), load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
