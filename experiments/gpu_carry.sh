#!/usr/bin/env bash
# Builds .gpu/ (git-ignored), what experiments/gpu_session.sh needs on a lent GPU machine that
# has PyTorch, Lightning and PyG but no RDKit, no OGB and no internet, within the device call's
# 64 MiB (the repository's tracked files are ~52 MB of it):
#   - RDKit's Chem core for CPython 3.12: rdBase, rdchem, rdmolfiles, rdmolops, cDataStructs,
#     rdGeometry and the shared libraries they load (found with readelf, so none is missing);
#     InChI and MurckoScaffold's reaction transforms made optional; 6.6 MB as tar.xz;
#   - the OGB wheel and its two pure-Python dependencies;
#   - ZINC-subset as a table: SMILES, penalized logP, the official split (from the local cache).
# The same stripping of the CPython 3.11 wheel ran this repository's training and predict
# locally (PYTHONPATH=<stripped> DEVICE=cpu bash experiments/gpu_session.sh).
set -euo pipefail
PY=${PY:-3.12}
rm -rf .gpu /tmp/rdkit_strip && mkdir -p .gpu /tmp/rdkit_strip
dl="python3 -m pip download -q --no-deps --only-binary=:all: --implementation cp --platform manylinux_2_28_x86_64"
$dl --python-version "$PY" -d /tmp/rdkit_strip rdkit==2026.9.1
$dl --python-version "$PY" -d .gpu ogb==1.3.6 outdated==0.2.2 littleutils==0.2.4
(cd /tmp/rdkit_strip && unzip -q rdkit-*.whl && rm rdkit-*.whl)
cd /tmp/rdkit_strip
keep=" rdkit/rdBase rdkit/Chem/rdchem rdkit/Chem/rdmolfiles rdkit/Chem/rdmolops rdkit/DataStructs/cDataStructs rdkit/Geometry/rdGeometry "
for f in $(find rdkit -name "*.so"); do case "$keep" in *" ${f%%.*} "*) ;; *) rm -f "$f" ;; esac; done
rm -rf rdkit/Contrib rdkit/sping rdkit/Data rdkit/ML rdkit/Dbase rdkit/VLib rdkit/Chem/Draw \
  rdkit/Chem/nbtests rdkit/Chem/MolStandardize rdkit/Avalon rdkit/ForceField rdkit/SimDivFilters \
  rdkit/Numerics rdkit/DistanceGeometry
python3 - <<'PY'
import glob, os, re, subprocess
libs = {os.path.basename(p): p for p in glob.glob("rdkit.libs/*")}
needed = lambda p: re.findall(r"NEEDED.*\[(.*)\]", subprocess.run(["readelf", "-d", p], capture_output=True, text=True).stdout)
seen, todo = set(), [n for m in glob.glob("rdkit/**/*.so", recursive=True) for n in needed(m)]
while todo:
    n = todo.pop()
    if n in libs and n not in seen:
        seen.add(n)
        todo += needed(libs[n])
for n in set(libs) - seen:
    os.remove(libs[n])
p = "rdkit/Chem/__init__.py"
s = open(p).read().replace("from rdkit.Chem.inchi import *\n",
                           "try:\n  from rdkit.Chem.inchi import *\nexcept ImportError:\n  pass\n")
open(p, "w").write(s)
p = "rdkit/Chem/Scaffolds/MurckoScaffold.py"
s = open(p).read()
head, rest = s.split("from rdkit.Chem import AllChem\n", 1)
cut = rest.index("\n\n", rest.index("murckoTransforms"))
line = "aromaticNTransform = AllChem.ReactionFromSmarts('[n:1]-[D1]>>[nH:1]')"
tail = rest[cut:].replace(line, f"try:\n  {line}\nexcept NameError:\n  aromaticNTransform = None")
body = "\n".join("  " + l for l in rest[:cut].splitlines())
open(p, "w").write(head + "try:\n  from rdkit.Chem import AllChem\n" + body
                   + "\nexcept ImportError:\n  murckoTransforms = []\n" + tail)
PY
tar -cf - . | xz -9e -T2 > "$OLDPWD/.gpu/rdkit_chem${PY/./}.tar.xz"
cd "$OLDPWD"
GRAPHNORM_RAW_DIR=${GRAPHNORM_RAW_DIR:-../shared/datasets} python3 - <<'PY'
import csv, gzip
from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule
cfg = TrainConfig.from_yaml("experiments/configs/zinc_subset_fast.yaml")
dm = GraphDataModule.from_config(cfg, progress=False)
dm.setup()
with gzip.open(".gpu/zinc_subset.csv.gz", "wt", newline="") as f:
    w = csv.writer(f)
    w.writerow(["smiles", "plogp", "split"])
    for split in ("train", "val", "test"):
        ds = dm.splits[split]
        w.writerows((ds[i].smiles, float(ds[i].y.view(-1)[0]), split) for i in range(len(ds)))
PY
du -sh .gpu
