"""Linear probing of the frozen [CLS] embedding (MAE protocol, He et al. 2021, Sec. 4).

Features ``h_CLS = ViT(x)[:, 0]`` come from the encoder in eval mode (BN uses its running
statistics) on unmasked images. As in MAE's probe, which puts a BatchNorm without affine
before the linear head, features are standardized with train-set statistics, then a
multinomial logistic regression ``softmax(W h + b)`` (L2-regularized, scikit-learn) is fit
on the train split and scored on the test split.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from graphnorm.norms import batch_stat_norms
from graphnorm.norms import recalibrate_batch_stats as _recalibrate

from .vit import VisionTransformer


@torch.no_grad()
def extract_cls(encoder: VisionTransformer, images: Tensor, batch_size: int = 512) -> np.ndarray:
    """[CLS] features ``[N, dim]`` as float64 numpy, encoder in eval mode (mode restored)."""
    was_training = encoder.training
    encoder.eval()
    try:
        feats = encoder.cls_embedding(images, batch_size)
    finally:
        encoder.train(was_training)
    return feats.double().numpy()


def recalibrate_batch_stats(encoder: VisionTransformer, images: Tensor) -> int:
    """Re-estimate the running statistics of every BN/IsoBN from unmasked ``images``.

    MAE trains the encoder on 25% of the patches, so BN statistics of the [CLS] channel
    (SepNorm) are those of masked inputs; the probe feeds whole images. One train-mode pass
    over all images replaces each running estimate by the exact full-data statistics
    ("precise BN", ``graphnorm.norms.recalibrate_batch_stats``), layer by layer; no labels
    and no weights change. Returns the number of recalibrated norms (0 for a BN-free encoder).
    """
    _recalibrate(encoder, [images])
    return len(batch_stat_norms(encoder))


def linear_probe(
    train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
    C: float = 1.0, max_iter: int = 3000,
) -> float:
    """Test accuracy of a logistic-regression probe fit on standardized train features."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter))
    clf.fit(train_x, train_y)
    return float(clf.score(test_x, test_y))
