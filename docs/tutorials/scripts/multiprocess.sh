#!/usr/bin/env bash
# Several processes on one CPU machine: Lightning DDP (gloo) for one run, --jobs for many.
# QUICK adds flags for a smoke run; leave it empty.
set -euo pipefail
QUICK=${QUICK:-}

# one run, two processes with one thread each; --batch-size is per process
graphnorm train --data mols.csv --target-columns Y --ensemble 1 --devices 2 --strategy ddp \
    --threads 1 --batch-size 32 --out runs/ddp $QUICK

# an ensemble of 2 models, trained at once (one process each)
graphnorm train --data mols.csv --target-columns Y --ensemble 2 --jobs 2 --threads 1 \
    --out runs/ens2 $QUICK
