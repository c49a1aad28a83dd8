"""The checkpoint contract (graphnorm/checkpoints): format 3 written by training, formats
1 and 2 still read with what they were trained with, other formats and broken files refused
with messages that name the file and the version."""
import pytest
import torch

from graphnorm.checkpoints import CHECKPOINT_FORMAT, CheckpointError, load_checkpoint
from graphnorm.chem import FEATURIZER_VERSION, FeaturizerConfig
from graphnorm.inference.predict import load_predictor


def _rewrite(tiny_run, tmp_path, name, change):
    out, _ = tiny_run
    ckpt = torch.load(out / "best.ckpt", weights_only=True)
    change(ckpt)
    torch.save(ckpt, tmp_path / name)
    return tmp_path / name


def test_training_writes_the_current_format_with_the_featurizer(tiny_run):
    out, _ = tiny_run
    meta = torch.load(out / "best.ckpt", weights_only=True)["graphnorm"]
    assert meta["format"] == CHECKPOINT_FORMAT == 3
    assert meta["featurizer"] == FeaturizerConfig(vocab="zinc").to_dict()
    assert meta["model_config"]["max_hops"] == meta["featurizer"]["max_hops"]
    loaded = load_checkpoint(out / "best.ckpt")
    assert loaded.featurizer == FeaturizerConfig(vocab="zinc")


@pytest.mark.parametrize("old_format", [1, 2])
def test_old_formats_load_with_the_settings_they_were_trained_with(tiny_run, tmp_path, old_format):
    def downgrade(ckpt):
        meta = ckpt["graphnorm"]
        meta["format"] = old_format
        # what formats 1-2 wrote: a named featurizer, max_dist only in later format-2 files
        meta["featurizer"] = {"name": "smiles_to_data", "version": 1, "vocab": "zinc", "max_hops": 5}
        if old_format == 1:  # scalar target scaling
            meta["target_mean"], meta["target_std"] = meta["target_mean"][0], meta["target_std"][0]
            for k in ("target_mean", "target_std"):
                ckpt["state_dict"][k] = ckpt["state_dict"][k].reshape(())

    old = load_predictor(_rewrite(tiny_run, tmp_path, "old.ckpt", downgrade))
    assert old.featurizer == FeaturizerConfig(vocab="zinc", max_hops=5, max_dist=20)
    out, _ = tiny_run
    new = load_predictor(out / "best.ckpt")
    mols = ["CCO", "c1ccccc1", "CC(=O)Nc1ccc(O)cc1"]
    assert old.predict(mols).prediction.tolist() == pytest.approx(
        new.predict(mols).prediction.tolist(), abs=1e-6)


def test_unknown_format_names_it_and_the_versions(tiny_run, tmp_path):
    def future(ckpt):
        ckpt["graphnorm"].update(format=99, version="9.0.0")

    with pytest.raises(CheckpointError) as err:
        load_checkpoint(_rewrite(tiny_run, tmp_path, "future.ckpt", future))
    msg = str(err.value)
    assert "future.ckpt has checkpoint format 99 (written by graphnorm 9.0.0)" in msg
    assert "reads formats 1, 2, 3" in msg


def test_other_featurizer_version_is_refused_before_predicting(tiny_run, tmp_path):
    def other(ckpt):
        ckpt["graphnorm"]["featurizer"]["version"] = FEATURIZER_VERSION + 1

    with pytest.raises(ValueError, match=f"featurizer version {FEATURIZER_VERSION + 1}, this "
                                         f"graphnorm has version {FEATURIZER_VERSION}"):
        load_predictor(_rewrite(tiny_run, tmp_path, "other.ckpt", other))


def test_checkpoint_errors_are_clear(tiny_run, tmp_path):
    out, _ = tiny_run
    with pytest.raises(CheckpointError, match="not found"):
        load_checkpoint(tmp_path / "missing.ckpt")
    broken = tmp_path / "broken.ckpt"
    broken.write_bytes((out / "best.ckpt").read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="cannot read"):
        load_checkpoint(broken)
    ckpt = torch.load(out / "best.ckpt", weights_only=True)
    ckpt["graphnorm"]["format"] = 99
    future = tmp_path / "future.ckpt"
    torch.save(ckpt, future)
    with pytest.raises(CheckpointError, match="format 99"):
        load_checkpoint(future)


