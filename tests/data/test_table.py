"""Own-data tables: reading every format, messages for bad input, splits, the cache.
No training here (tests/train/test_own_data.py trains)."""
import gzip
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.data.table import TableError, read_table, read_targets
from graphnorm.data.table_dataset import TableSpec, load_table_dataset, write_run_files
from graphnorm.data.table_split import balanced_scaffold_split, parse_split_sizes, random_split


@pytest.fixture
def table_csv(zinc_property_table, tmp_path):
    path = tmp_path / "mols.csv"
    zinc_property_table.head(200).to_csv(path, index=False)
    return path


def spec(path, **kw) -> TableSpec:
    base = dict(target_columns=["logp", "tpsa"], split="random")
    base.update(kw)
    return TableSpec(str(path), **base)


def test_formats_read_alike_with_user_row_numbers(zinc_property_table, tmp_path):
    df = zinc_property_table.head(5)
    df.to_csv(tmp_path / "a.csv", index=False)
    df.to_csv(tmp_path / "a.tsv", index=False, sep="\t")
    with gzip.open(tmp_path / "a.csv.gz", "wt") as f:
        df.to_csv(f, index=False)
    (tmp_path / "a.smi").write_text("".join(f"{s} {i}\n" for s, i in zip(df.smiles, df.id)))
    (tmp_path / "h.smi").write_text("smiles id logp\n" + "".join(
        f"{s} {i} {v}\n" for s, i, v in zip(df.smiles, df.id, df.logp)))
    from rdkit import Chem

    with Chem.SDWriter(str(tmp_path / "a.sdf")) as w:
        for s, v in zip(df.smiles, df.logp):
            mol = Chem.MolFromSmiles(s)
            mol.SetProp("logp", str(v))
            w.write(mol)
    for name in ("a.csv", "a.tsv", "a.csv.gz", "h.smi"):
        t = read_table(tmp_path / name)
        assert t.smiles == df.smiles.tolist() and t.labels[0] == "line 2", name
        assert read_targets(t, ["logp"], "regression")[0][:, 0].tolist() == pytest.approx(df.logp.tolist())
    smi = read_table(tmp_path / "a.smi")
    assert smi.smiles == df.smiles.tolist() and smi.frame.name.tolist() == df.id.tolist()
    assert smi.labels[0] == "line 1"  # no header: the first molecule is line 1
    sdf = read_table(tmp_path / "a.sdf")
    assert sdf.labels[0] == "record 1" and len(sdf) == 5
    canon = [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in df.smiles]
    assert sdf.smiles == canon
    assert read_targets(sdf, ["logp"], "regression")[0][:, 0].tolist() == pytest.approx(df.logp.tolist())


def test_parquet_reads_or_names_the_missing_engine(zinc_property_table, tmp_path):
    path = tmp_path / "a.parquet"
    try:
        zinc_property_table.head(5).to_parquet(path)
    except ImportError:
        path.write_bytes(b"PAR1 not really")
        with pytest.raises(TableError, match="pyarrow"):
            read_table(path)
        return
    assert read_table(path).labels[0] == "row 1"


def test_missing_columns_list_the_columns_found(table_csv, tmp_path):
    no_smiles = tmp_path / "nosmiles.csv"
    pd.read_csv(table_csv).rename(columns={"smiles": "structure"}).to_csv(no_smiles, index=False)
    with pytest.raises(TableError, match=r"no 'smiles' column; columns found: id, structure, logp.*--smiles-column"):
        read_table(no_smiles)
    assert read_table(no_smiles, "structure").smiles[0].startswith("CC")
    t = read_table(table_csv)
    with pytest.raises(TableError, match=r"no column 'pIC50'; columns found: id, smiles, logp, tpsa, qed_high"):
        read_targets(t, ["pIC50"], "regression")


def test_repeated_column_other_separator_and_no_target_say_what_is_wrong(tmp_path):
    # pandas would read a second 'y' as 'y.1', a second target nobody named
    (tmp_path / "twice.csv").write_text("smiles,y,y\nCCO,1,2\nCCC,2,3\n")
    with pytest.raises(TableError, match=r"names column 'y' 2 times \(columns 2, 3\)"):
        read_table(tmp_path / "twice.csv")
    (tmp_path / "semi.csv").write_text("smiles;y\nCCO;1\n")
    with pytest.raises(TableError, match=r"no 'smiles' column.*looks ';'-separated"):
        read_table(tmp_path / "semi.csv")
    (tmp_path / "text.csv").write_text("smiles,y,note\nCCO,abc,\nCCC,def,\n")
    with pytest.raises(TableError, match=r"no numeric column besides 'smiles' to learn \('y' holds "
                                         r"text, e.g. 'abc' \(2 of 2 filled cells\); 'note' is empty\)"):
        read_targets(read_table(tmp_path / "text.csv"), [], "regression")


@pytest.mark.parametrize("cell, message", [
    ("abc", r"target column 'logp' is not numeric: line 5 holds 'abc'"),
    ("inf", r"target column 'logp' is not numeric: line 5 holds 'inf'"),
])
def test_non_numeric_target_names_line_and_value(table_csv, tmp_path, cell, message):
    df = pd.read_csv(table_csv, dtype=str)
    df.loc[3, "logp"] = cell  # data row 4 = line 5 (the header is line 1)
    df.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(TableError, match=message):
        read_targets(read_table(tmp_path / "t.csv"), ["logp"], "regression")


def test_empty_column_and_bad_classes(table_csv, tmp_path):
    df = pd.read_csv(table_csv)
    df["nothing"] = ""
    df.to_csv(tmp_path / "t.csv", index=False)
    t = read_table(tmp_path / "t.csv")
    with pytest.raises(TableError, match="'nothing' is entirely empty"):
        read_targets(t, ["nothing"], "regression")
    with pytest.raises(TableError, match=r"must be 0 or 1, but line 2 holds '\d"):
        read_targets(t, ["logp"], "classification")
    y, names = read_targets(t, ["qed_high"], "classification")
    assert set(np.unique(y)) <= {0.0, 1.0} and names == ["qed_high"]


def test_empty_header_only_and_non_utf8_files(table_csv, tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(TableError, match="empty.csv is empty"):
        read_table(tmp_path / "empty.csv")
    (tmp_path / "head.csv").write_text("smiles,logp\n")
    with pytest.raises(TableError, match="header but no molecules"):
        read_table(tmp_path / "head.csv")
    raw = table_csv.read_bytes().split(b"\n")
    raw[32] = raw[32].replace(b",", b"\xff,", 1)  # line 33
    (tmp_path / "latin.csv").write_bytes(b"\n".join(raw))
    with pytest.raises(TableError, match=r"not a UTF-8 text file: line 33 .*byte 0xff"):
        read_table(tmp_path / "latin.csv")
    lenient = read_table(tmp_path / "latin.csv", strict_encoding=False)
    assert list(lenient.bad_rows) == [31] and lenient.labels[31] == "line 33"


def test_invalid_and_duplicate_rows_are_skipped_or_counted(table_csv, tmp_path):
    df = pd.read_csv(table_csv)
    df.loc[10, "smiles"] = "C1CC"  # unclosed ring
    df.loc[11, "smiles"] = "C(C)(C)(C)(C)C"  # five-valent carbon: RDKit refuses to sanitize
    df.loc[12, ["logp", "tpsa"]] = np.nan  # no label at all
    df.loc[13, "tpsa"] = np.nan  # one label missing: kept
    dup = df.iloc[[0, 1]].assign(id=["D0", "D1"])
    df = pd.concat([df, dup], ignore_index=True)
    df.to_csv(tmp_path / "t.csv", index=False)
    splits = load_table_dataset(spec(tmp_path / "t.csv"), root=tmp_path / "cache", progress=False)
    assert sum(len(v) for v in splits.values()) == len(df) - 3
    assert splits.skipped.row.tolist() == ["line 12", "line 13", "line 14"]
    assert "unclosed ring" in splits.skipped.reason[0].lower() or "C1CC" in splits.skipped.reason[0]
    assert "valence" in splits.skipped.reason[1].lower()
    assert splits.report["duplicates"]["rows"] == 4 and splits.report["duplicates"]["molecules"] == 2
    assert splits.report["targets"]["tpsa"]["missing"] == 1
    write_run_files(tmp_path, splits)
    assert pd.read_csv(tmp_path / "skipped_rows.csv").row.tolist() == ["line 12", "line 13", "line 14"]
    saved = json.loads((tmp_path / "splits.json").read_text())
    assert sorted(saved["train"] + saved["val"] + saved["test"], key=lambda s: int(s.split()[1])) == \
        [f"line {k + 2}" for k in range(len(df)) if k not in (10, 11, 12)]


def test_split_too_small_is_refused(table_csv, tmp_path):
    pd.read_csv(table_csv).head(6).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(TableError, match=r"the val split of --split random holds no molecule \(6 usable rows"):
        load_table_dataset(spec(tmp_path / "t.csv", split_sizes="0.9,0.08,0.02"),
                           root=tmp_path / "cache", progress=False)


def test_splits_scaffold_column_and_rerun_from_file(table_csv, tmp_path):
    from graphnorm.data.scaffold import murcko_scaffold

    s = load_table_dataset(spec(table_csv, split="scaffold"), root=tmp_path / "c", progress=False)
    scaf = {k: {murcko_scaffold(d.smiles) for d in s[k]} for k in s}
    assert not (scaf["train"] & scaf["val"]) and not (scaf["train"] & scaf["test"])
    assert not (scaf["val"] & scaf["test"]) and len(s["train"]) >= 150
    write_run_files(tmp_path, s)
    again = load_table_dataset(spec(table_csv, split=f"file:{tmp_path / 'splits.json'}"),
                               root=tmp_path / "c", progress=False)
    assert all([d.smiles for d in again[k]] == [d.smiles for d in s[k]] for k in s)
    df = pd.read_csv(table_csv)
    df["fold"] = ["test" if k % 10 == 0 else "valid" if k % 10 == 1 else "train" for k in range(len(df))]
    df.to_csv(tmp_path / "f.csv", index=False)
    by_col = load_table_dataset(spec(tmp_path / "f.csv", split="column:fold", target_columns=[]),
                                root=tmp_path / "c", progress=False)
    assert by_col["test"][0].smiles == df.smiles[0] and len(by_col["val"]) == 20
    assert by_col.info["targets"] == ["logp", "tpsa", "qed_high"]  # id is text: not a target
    df.loc[5, "fold"] = "hold-out"
    df.to_csv(tmp_path / "f.csv", index=False)
    with pytest.raises(TableError, match="must say train, val or test; line 7 holds 'hold-out'"):
        load_table_dataset(spec(tmp_path / "f.csv", split="column:fold"), root=tmp_path / "c", progress=False)


def test_split_helpers():
    assert parse_split_sizes("0.8,0.1,0.1") == (0.8, 0.1, 0.1)
    with pytest.raises(TableError, match="sum to 1"):
        parse_split_sizes("0.8,0.1")
    a, b = random_split(50, (0.8, 0.1, 0.1), 0), random_split(50, (0.8, 0.1, 0.1), 0)
    assert a == b and [len(a[k]) for k in a] == [40, 5, 5]
    groups = ["x"] * 30 + [f"s{k}" for k in range(70)]  # one big scaffold must stay whole
    split = balanced_scaffold_split(groups, (0.8, 0.1, 0.1), 0)
    assert set(range(30)) <= set(split["train"]) and sum(map(len, split.values())) == 100


def test_featurized_once_then_cached(table_csv, tmp_path, monkeypatch):
    import graphnorm.data.build as build

    first = load_table_dataset(spec(table_csv), root=tmp_path / "c", progress=False)
    monkeypatch.setattr(build, "featurize_with_progress",
                        lambda *a, **k: pytest.fail("featurized again"))
    other = load_table_dataset(spec(table_csv, target_columns=["qed_high"], task="classification"),
                               root=tmp_path / "c", progress=False)
    assert len(other["train"]) == len(first["train"]) and other.info["task_type"] == "binary"
    assert other["train"].targets().shape[1] == 1
