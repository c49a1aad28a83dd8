"""Multi-task pre-training on the measured ADMET corpus (``graphnorm pretrain``).

One straight path, one module a step: `corpus` (the tables as one sparse label matrix) →
`splits` (no benchmark molecule; held-out scaffolds and tasks) → `data` (featurized once,
cached) → `objective` (masked, standardized, each molecule weighing one) → `setup` (the spec
and the run built from it) → `loop` (resumable, budgeted, logging the cost curve) with
`evaluate` (held-out molecules, and held-out tasks by a linear probe) → `cli`.
"""
