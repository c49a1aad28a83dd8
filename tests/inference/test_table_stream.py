"""The chunked reader of `graphnorm predict` (graphnorm/inference/table_stream.py) gives the
rows, columns and per-row problems of `read_table`, whatever the chunk size and skip."""
import gzip

import pandas as pd
import pytest

from graphnorm.data.table import TableError, read_table
from graphnorm.inference.table_stream import TableStream

ETHANOL_SDF = """ethanol
  RDKit          2D

  3  2  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    1.2990    0.7500    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    2.5981   -0.0000    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
  2  3  1  0
M  END
>  <id>
E{k}

"""
FILES = {
    # a blank row mid-file, trailing blank lines (no rows), a quoted comma, a line not UTF-8
    "bytes.csv": b'\xef\xbb\xbfid,smiles,note\n1,CCO,x\n\n3,c1ccccc1,"a, b"\n4,CC\xff,z\n5,C,\n\n\n',
    # a quoted cell spanning two lines: named by its first line
    "quoted.csv": b'id,smiles,note\n1,CCO,x\n2,"C\nC",y\n3,CC,z\n',
    "plain.smi": b"CCO ethanol\nxyz\n\nc1ccccc1 benzene ring\n\n",
    "header.smi": b"smiles id name\nCCO 1 eth anol\nCC 2\n",
    "tabs.tsv": b"smiles\tv\nCCO\t1\nCC\t2\nCCC\t3\n",
    # the last record lacks its $$$$; a data field only some records have
    "mols.sdf": ("$$$$\n".join(ETHANOL_SDF.format(k=k) for k in range(5))
                 .replace(">  <id>\nE3", ">  <id>\nE3\n\n>  <extra>\nonly here")).encode(),
}


@pytest.fixture(params=sorted(FILES) + ["bytes.csv.gz"])
def table_file(request, tmp_path):
    name = request.param
    raw = FILES[name.removesuffix(".gz")]
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    return path


@pytest.mark.parametrize("rows,skip", [(1, 0), (2, 1), (3, 3), (100, 0)])
def test_chunks_are_the_whole_tables_rows(table_file, rows, skip):
    whole = read_table(table_file, strict_encoding=False)
    stream = TableStream(table_file)
    chunks = list(stream.chunks(rows, skip))
    assert stream.columns == [str(c) for c in whole.frame.columns]
    assert stream.smiles_column == whole.smiles_column and stream.count_rows() == len(whole)
    assert [c.start for c in chunks] == list(range(skip, len(whole), rows))
    assert all(len(c) == min(rows, len(whole) - c.start) for c in chunks)
    if chunks:
        frame = pd.concat([c.frame for c in chunks], ignore_index=True)
        pd.testing.assert_frame_equal(frame, whole.frame.iloc[skip:].reset_index(drop=True),
                                      check_dtype=False)
    assert {c.start + k: why for c in chunks for k, why in c.bad_rows.items()} == \
        {k: why for k, why in whole.bad_rows.items() if k >= skip}
    labels = [label for c in chunks for label in c.labels]
    expected = whole.labels[skip:]
    if table_file.name == "quoted.csv":  # read_table falls back to row numbers here
        expected = ["line 2", "line 3", "line 5"][skip:]
    assert labels == expected


@pytest.mark.parametrize("rows", [10, 4])
def test_a_malformed_line_mid_file_is_named_by_its_file_line(tmp_path, rows):
    """A line with a field too many stops the stream when it gets there, naming the file's
    line (with chunks of 10 its chunk holds it alone: no column may shift into an index)."""
    path = tmp_path / "bad.csv"
    path.write_text("smiles,v\n" + "".join(f"C{'C' * k},{k}\n" for k in range(30)) + "CC,1,2\n")
    chunks = TableStream(path).chunks(rows)
    for _ in range(30 // rows):
        next(chunks)
    with pytest.raises(TableError, match="(?i)expected 2 fields in line 32, saw 3"):
        next(chunks)
