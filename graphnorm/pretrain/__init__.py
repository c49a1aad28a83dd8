"""Multi-task pre-training on the measured ADMET corpus (``graphnorm pretrain``).

One straight path, one module a step: `corpus` (the tables as one sparse label matrix) →
`splits` (no benchmark molecule; held-out scaffolds and tasks) → `data` (featurized once,
cached) → `objective` (masked, standardized, each molecule weighing one) → `setup` (the spec
and the run built from it) → `module` + `datamodule` (the loss and the batches as Lightning
parts) → `fit` (the package's one training stack: resumable, budgeted, a run record) with
`held_out` (the cost curve, best.ckpt, the stops) and `evaluate` (held-out molecules, and
held-out tasks by a linear probe) → `cli`. The run folder's files: `folder`.
"""
