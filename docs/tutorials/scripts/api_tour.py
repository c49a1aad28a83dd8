"""The Python API in a few lines. Run beside the own-table tutorial's runs (runs/mine) with
$GRAPHNORM_RAW_DIR set (or ZINC-subset is downloaded)."""
from graphnorm import load_predictor
from graphnorm.chem import FeaturizerConfig, featurize_many, smiles_to_data
from graphnorm.data import load_dataset  # {"train", "val", "test"} of PyG Data with y and smiles
from graphnorm.data.table_dataset import TableSpec, load_table_dataset
from graphnorm.inference.embed import embed_smiles
from graphnorm.graph import collate_graphs, graphormer_slim
from graphnorm.norms import build_norm  # "ln", "bn", "rms", "none", "isobn", "sep:bn+ln", ...

norm = build_norm("sep:bn+ln", 80)  # x [B, L, D], padding_mask [B, L] -> [B, L, D]
splits = load_dataset("zinc-subset")  # raw files from raw_dir= or $GRAPHNORM_RAW_DIR, else download
arrays = featurize_many(["CCO", "C1CC"], FeaturizerConfig(vocab="zinc"))  # .graphs, .errors
preds = load_predictor("runs/mine/model_0/best.ckpt").predict(["CCO", "c1ccccc1"])  # DataFrame
ens = load_predictor("runs/mine").predict(["CCO"])  # ensemble dir: mean + <target>_std columns
own = load_table_dataset(TableSpec("mols.csv", target_columns=["Y"], split="scaffold"))
emb, errors = embed_smiles("runs/mine/model_0", ["CCO", "c1ccccc1"])  # float32 [2, D]

batch = collate_graphs([smiles_to_data("CCO"), smiles_to_data("c1ccccc1")])  # padded tensors
model = graphormer_slim()  # the paper's 12 x 80 Graphormer
print(len(splits["train"]), arrays.errors, type(own).__name__, type(batch).__name__, preds, ens, emb.shape, sep="\n")
