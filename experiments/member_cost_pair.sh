#!/bin/bash
# One Graphormer member's cost before and after a code change, side by side on the 2 cores:
# each TASK's g150 seed-0 config trained by the old code (a git worktree, OLD, made with
# `git worktree add /tmp/old_wt <sha>`) and by this checkout; prints CPU-s, CPU-min per 1,000
# training molecules and scores.
# usage: OLD=/tmp/old_wt bash experiments/member_cost_pair.sh TASK [TASK ...]
# OLD=none: this checkout only, two tasks at a time. Runs in /tmp/cost; the feature cache of
# this checkout serves both trees. A task may name another campaign's seed-0 run: BENCH:TASK
# (e.g. g1500l:ppbr_az, gsize:solubility_aqsoldb; default bench g150); of an ensemble's run
# (board31:dili) its Graphormer member, model_0. SERIAL=1: old, then new, one run at a time
# (nothing beside either; the other core idle).
set -e
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OLD=${OLD:-/tmp/old_wt}
source .venv/bin/activate
mkdir -p /tmp/cost

config() {  # config VER [BENCH:]TASK: that run's resolved config, to train into /tmp/cost/VER/TASK
  local bench=g150 task=$2
  case $2 in *:*) bench=${2%%:*}; task=${2#*:};; esac
  rm -rf "/tmp/cost/$1/$task"
  python -c "import sys; sys.path.insert(0, 'experiments')
from pathlib import Path
from member_cost_profile import write_rerun_config
run = Path('experiments/results/tdc_admet/$bench/$task/runs/sep-bn-bn/seed0')
run = run / 'model_0' if (run / 'model_0').is_dir() else run
write_rerun_config(run, Path('/tmp/cost/$1/$task'), Path('/tmp/cost/$1_$task.yaml'))"
}

train() {  # train VER TASK [TREE]: python -m puts the working directory first on sys.path
  (cd "${3:-$ROOT}" && GRAPHNORM_CACHE="$ROOT/data/cache" python -m graphnorm.cli train \
     --config "/tmp/cost/$1_$2.yaml" --no-progress > "/tmp/cost/$1_$2.log" 2>&1)
}

report() {  # report VER TASK...
  python - "$@" <<'PY'
import json, sys
from graphnorm.run_folder import read_metrics
ver, tasks = sys.argv[1], sys.argv[2:]
for t in tasks:
    m = read_metrics(f"/tmp/cost/{ver}/{t}")
    n = json.load(open(f"/tmp/cost/{ver}/{t}/data_report.json"))["split_sizes"]["train"]
    print(t, ver, "cpu_s", m["cpu_time_s"], "steps", m["steps"], "train", n, "cpu_min_per_1000",
          round(m["cpu_time_s"] / 60 / (n / 1000), 2), "val", round(m["val_" + m["metric"]], 4),
          "test", round(m["test_" + m["metric"]], 4), "sha", m.get("git_sha"))
PY
}

if [ "$OLD" = none ]; then
  set -- "$@" ""  # pairs of tasks, one per core
  while [ -n "$1" ]; do
    a=$1; b=$2; shift 2 || shift
    echo "$a $b load $(cut -d' ' -f1-3 /proc/loadavg)"
    config new "$a"; train new "${a#*:}" &
    if [ -n "$b" ]; then config new "$b"; train new "${b#*:}" & fi
    wait
    report new ${a#*:} ${b:+${b#*:}}
  done
  exit 0
fi
for task in "$@"; do
  config old "$task"; config new "$task"
  echo "$task load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ -n "$SERIAL" ]; then
    train old "${task#*:}" "$OLD"; train new "${task#*:}"
  else
    train old "${task#*:}" "$OLD" &
    train new "${task#*:}" &
    wait
  fi
  report old "${task#*:}"; report new "${task#*:}"
done
