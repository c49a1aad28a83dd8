#!/bin/bash
# One Graphormer member's cost before and after a code change, side by side on the 2 cores:
# each TASK's g150 seed-0 config trained by the old code (a git worktree, OLD, made with
# `git worktree add /tmp/old_wt <sha>`) and by this checkout; prints CPU-s and scores.
# usage: OLD=/tmp/old_wt bash experiments/member_cost_pair.sh TASK [TASK ...]
# (runs in /tmp/cost; the feature cache of this checkout serves both)
set -e
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OLD=${OLD:-/tmp/old_wt}
source .venv/bin/activate
mkdir -p /tmp/cost
for task in "$@"; do
  run=experiments/results/tdc_admet/g150/$task/runs/sep-bn-bn/seed0
  for ver in old new; do
    python - "$run" "$ver" "$task" <<'PY'
import json, sys, yaml
run, ver, task = sys.argv[1:]
c = dict(json.load(open(run + "/metrics.json"))["config"])
c["out"] = f"/tmp/cost/{ver}/{task}"; c.pop("resume", None)
open(f"/tmp/cost/{ver}_{task}.yaml", "w").write(yaml.safe_dump(c))
PY
    rm -rf "/tmp/cost/$ver/$task"
  done
  echo "$task load $(cut -d' ' -f1-3 /proc/loadavg)"
  # python -m puts the working directory first on sys.path: each run imports its own tree
  (cd "$OLD" && GRAPHNORM_CACHE="$ROOT/data/cache" python -m graphnorm.cli train \
     --config "/tmp/cost/old_$task.yaml" --no-progress > "/tmp/cost/old_$task.log" 2>&1) &
  python -m graphnorm.cli train --config "/tmp/cost/new_$task.yaml" --no-progress \
    > "/tmp/cost/new_$task.log" 2>&1 &
  wait
  python - "$task" <<'PY'
import json, sys
t = sys.argv[1]
for ver in ("old", "new"):
    m = json.load(open(f"/tmp/cost/{ver}/{t}/metrics.json"))
    print(t, ver, "cpu_s", m["cpu_time_s"], "steps", m["steps"], "val", round(m["val_" + m["metric"]], 4),
          "test", round(m["test_" + m["metric"]], 4), "sha", m.get("git_sha"))
PY
done
