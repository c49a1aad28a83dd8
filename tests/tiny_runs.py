"""A seconds-long training config shared by test modules (conftest.py is no importable name:
pytest imports every conftest.py as `conftest`)."""


def tiny_config(raw_dir, cache_root, out, **kw):
    """ZINC-subset, tiny preset, 256 training graphs, 2 epochs."""
    from graphnorm.train.config import TrainConfig

    base = dict(dataset="zinc-subset", preset="tiny", raw_dir=str(raw_dir), cache_root=str(cache_root),
                max_epochs=2, batch_size=64, limit_train=256, limit_eval=128, lr=1e-3,
                out=str(out), progress=False, checkpoint_every_n_steps=2)
    base.update(kw)
    return TrainConfig(**base)
