"""A run stopped and resumed from last.ckpt trains exactly as one that was never stopped: the
same batches in the same order, the same dropout masks, the same final scores (a benchmark
campaign that spans sessions must not depend on where a session ended)."""
import pytest
import torch

from graphnorm.train.module import GraphormerModule
from graphnorm.train.run import train

from tiny_runs import tiny_config


class _Killed(Exception):
    pass


def _kill_at(monkeypatch, step: int) -> None:
    """The first training step at ``global_step == step`` raises, once: last.ckpt then holds
    the state a real kill at that point would have left (checkpoint every 2 steps)."""
    original, fired = GraphormerModule.training_step, []

    def training_step(self, batch, batch_idx):
        if self.global_step == step and not fired:
            fired.append(step)
            raise _Killed(step)
        return original(self, batch, batch_idx)

    monkeypatch.setattr(GraphormerModule, "training_step", training_step)


def _assert_same_run(whole: dict, resumed: dict, tmp_path) -> None:
    """The same scores, and the same weights and statistics in last.ckpt."""
    for key in ("val_mae", "test_mae", "best_epoch"):
        assert resumed[key] == whole[key], key
    a = torch.load(tmp_path / "whole" / "last.ckpt", weights_only=False, map_location="cpu")
    b = torch.load(tmp_path / "cut" / "last.ckpt", weights_only=False, map_location="cpu")
    for name, tensor in a["state_dict"].items():
        assert torch.equal(tensor, b["state_dict"][name]), name


# 256 graphs at batch 64: 4 steps per epoch; step 2 is mid-epoch, step 4 the epoch boundary
# (last.ckpt written after epoch 1's validation), step 6 mid-epoch after an epoch boundary
@pytest.mark.parametrize("kill_step", [2, 4, 6])
def test_resumed_run_equals_uninterrupted_run(raw_dir, cache_root, zinc_subset, tmp_path,
                                              monkeypatch, kill_step):
    kw = dict(max_epochs=3, norm="sep:bn+ln", dropout=0.2, attention_dropout=0.2, seed=3)
    whole = train(tiny_config(raw_dir, cache_root, tmp_path / "whole", **kw))
    _kill_at(monkeypatch, kill_step)
    with pytest.raises(_Killed):
        train(tiny_config(raw_dir, cache_root, tmp_path / "cut", **kw))
    saved = torch.load(tmp_path / "cut" / "last.ckpt", weights_only=False, map_location="cpu")
    assert saved["global_step"] == kill_step
    resumed = train(tiny_config(raw_dir, cache_root, tmp_path / "cut", resume=True, **kw))
    assert resumed["steps"] == whole["steps"] == 12
    assert resumed["resumes"] == [{"step": kill_step, "exact": True}] and "resumes" not in whole
    _assert_same_run(whole, resumed, tmp_path)


def test_resume_keeps_the_training_batch_moments(raw_dir, cache_root, zinc_subset, tmp_path, monkeypatch):
    """--recalibrate-from training: the BatchNorm moments kept before a kill (at step 10 of
    12, the last validation reads steps 5-12) travel in last.ckpt, so the resumed run's
    statistics and scores are the uninterrupted run's (without them its last validation
    would read 2 batches instead of 8)."""
    kw = dict(max_epochs=3, norm="sep:bn+bn", seed=3, recalibrate_source="training")
    whole = train(tiny_config(raw_dir, cache_root, tmp_path / "whole", **kw))
    _kill_at(monkeypatch, 10)
    with pytest.raises(_Killed):
        train(tiny_config(raw_dir, cache_root, tmp_path / "cut", **kw))
    resumed = train(tiny_config(raw_dir, cache_root, tmp_path / "cut", resume=True, **kw))
    _assert_same_run(whole, resumed, tmp_path)


def _cut_run(raw_dir, cache_root, out, monkeypatch, **kw):
    _kill_at(monkeypatch, 2)
    with pytest.raises(_Killed):
        train(tiny_config(raw_dir, cache_root, out, **kw))
    monkeypatch.undo()


def test_resume_with_another_batch_size_is_refused(raw_dir, cache_root, zinc_subset, tmp_path,
                                                   monkeypatch):
    _cut_run(raw_dir, cache_root, tmp_path, monkeypatch)
    with pytest.raises(ValueError, match="4 training batches per epoch and seed 0; this run has 8"):
        train(tiny_config(raw_dir, cache_root, tmp_path, resume=True, batch_size=32))


def test_checkpoint_without_resume_state_is_flagged_inexact(raw_dir, cache_root, zinc_subset,
                                                            tmp_path, monkeypatch):
    """last.ckpt files written before exact resumes existed continue, and say so."""
    _cut_run(raw_dir, cache_root, tmp_path, monkeypatch)
    ckpt = torch.load(tmp_path / "last.ckpt", weights_only=False, map_location="cpu")
    assert ckpt.pop("GraphDataModule")["batches_per_epoch"] == 4
    torch.save(ckpt, tmp_path / "last.ckpt")
    resumed = train(tiny_config(raw_dir, cache_root, tmp_path, resume=True))
    assert resumed["steps"] == 8 and resumed["resumes"] == [{"step": 2, "exact": False}]


def test_schedule_length_is_lightnings_step_count(raw_dir, cache_root, zinc_subset, tmp_path,
                                                  monkeypatch):
    """The LR schedule counts its steps itself (Lightning's estimate would build the loader
    before a resume restores it); the count must still be the run's real one."""
    original, seen = GraphormerModule.configure_optimizers, {}

    def configure_optimizers(self):
        seen.update(ours=self._optimizer_steps(), lightning=self.trainer.estimated_stepping_batches)
        return original(self)

    monkeypatch.setattr(GraphormerModule, "configure_optimizers", configure_optimizers)
    result = train(tiny_config(raw_dir, cache_root, tmp_path, limit_train=200, max_epochs=3))
    assert seen["ours"] == seen["lightning"] == result["steps"] == 3 * 4  # 200 / 64 -> 4 batches


def test_a_moved_run_folder_resumes_to_the_uninterrupted_run(raw_dir, cache_root, zinc_subset,
                                                             tmp_path, monkeypatch):
    """A campaign copied to another clone resumes there with its best score so far."""
    import shutil

    kw = dict(max_epochs=3, norm="sep:bn+ln", seed=3)
    whole = train(tiny_config(raw_dir, cache_root, tmp_path / "whole", **kw))
    _kill_at(monkeypatch, 6)  # after epoch 1's validation: a best score is in last.ckpt
    with pytest.raises(_Killed):
        train(tiny_config(raw_dir, cache_root, tmp_path / "cut", **kw))
    monkeypatch.undo()
    shutil.move(tmp_path / "cut", tmp_path / "moved")
    resumed = train(tiny_config(raw_dir, cache_root, tmp_path / "moved", resume=True, **kw))
    for key in ("val_mae", "test_mae", "best_epoch"):
        assert resumed[key] == whole[key], key


def test_checkpoint_state_follows_a_moved_run_folder(tmp_path):
    """Lightning's own ModelCheckpoint forgets the best score when the folder moved; then the
    next validation, however worse, would overwrite best.ckpt."""
    from graphnorm.train.callbacks import RunFolderCheckpoint

    saver = RunFolderCheckpoint(dirpath=tmp_path / "old", filename="best", monitor="val/mae")
    best = f"{saver.dirpath}/best.ckpt"
    saver.best_model_score, saver.best_model_path = torch.tensor(0.5), best
    saver.best_k_models, saver.kth_best_model_path = {best: torch.tensor(0.5)}, best
    loader = RunFolderCheckpoint(dirpath=tmp_path / "new", filename="best", monitor="val/mae")
    loader.load_state_dict(saver.state_dict())
    moved = f"{loader.dirpath}/best.ckpt"
    assert loader.best_model_score == 0.5 and loader.best_model_path == moved
    assert list(loader.best_k_models) == [moved] and loader.kth_best_model_path == moved
