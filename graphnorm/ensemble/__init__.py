"""The ensemble as an object: its members (model file, kind, weight), the rule that averages
them (`averaging`: the weighted mean, or of the log-odds for classification) and the one
`Ensemble.combine` that training, ``predict``/``serve``, conformal intervals and benchmark
summaries call; `Ensemble.read` is the one reader of an ensemble folder's ``ensemble.json``.

Above the model registry and the checkpoint reader, below ``train/`` and the packages that
use trained models (docs/design.md, "Ensembles").
"""
from .averaging import AVERAGES, LOGODDS, MEAN, average_for, check_average
from .model import Ensemble, Member, MemberRowsError

__all__ = ["AVERAGES", "LOGODDS", "MEAN", "average_for", "check_average", "Ensemble", "Member",
           "MemberRowsError"]
