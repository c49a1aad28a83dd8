"""The training DataLoader that makes ``--resume`` exact: a run stopped anywhere and resumed
from ``last.ckpt`` trains on the same batches with the same dropout masks as a run that was
never stopped (tests/train/test_exact_resume.py), so a benchmark campaign split over
sessions gives the numbers one uninterrupted session would.

Three things make it exact, none of which Lightning does for a plain DataLoader (it warns that
a mid-epoch resume is unreliable, and it was: the resumed epoch re-drew its first batches and
dropped its last):

- the epoch and the position in it: ``LengthBucketSampler``'s order is a function of seed and
  epoch, so the datamodule sets the sampler's ``epoch`` and ``skip`` from the restored
  ``global_step``;
- torch's random state (dropout masks) when the checkpoint was written: saved by the
  datamodule's ``state_dict`` (``rng_state``), which Lightning restores at every resume
  (the loader's own state it restores mid-epoch only), and set back here, on either side of
  the iterator's draw of a worker seed, as the uninterrupted run would have drawn it;
- a guard: resuming with another batch size, data limit or seed would make the saved position
  meaningless, so it fails with a message instead.
"""
from __future__ import annotations

import torch
from torch.utils.data import DataLoader


class ResumableLoader(DataLoader):
    """A DataLoader over a ``LengthBucketSampler`` batch sampler, continued from
    ``resume`` (the datamodule's saved ``rng_state``) when given. Exact in one process; DDP
    ranks re-seed their dropout at the start of training."""

    def __init__(self, *args, resume: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if resume:
            check_same_run(resume, len(self.batch_sampler), self.batch_sampler.seed)
        self._resume = resume or None

    # Lightning's stateful-loader interface: with it Lightning treats the loader as resumable
    # and counts the skipped batches as done; the state itself travels in the datamodule's.
    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass

    def __iter__(self):
        state, self._resume = self._resume, None
        if state is None:
            return super().__iter__()
        mid_epoch = self.batch_sampler.skip > 0
        if not mid_epoch:  # the uninterrupted run starts this epoch's iterator from that state
            set_rng(state)
        iterator = super().__iter__()  # draws a worker base seed from torch's generator
        if mid_epoch:  # the uninterrupted run made no new iterator here: undo that draw
            set_rng(state)
        return iterator


def rng_state(batches_per_epoch: int, seed: int) -> dict:
    """What a checkpoint keeps for an exact resume, taken when it is written."""
    state = {"batches_per_epoch": batches_per_epoch, "seed": seed, "cpu_rng": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda_rng"] = torch.cuda.get_rng_state_all()
    return state


def check_same_run(state: dict, batches_per_epoch: int, seed: int) -> None:
    saved = (state.get("batches_per_epoch"), state.get("seed"))
    if saved != (batches_per_epoch, seed):
        raise ValueError(
            f"the checkpoint was written by a run with {saved[0]} training batches per epoch "
            f"and seed {saved[1]}; this run has {batches_per_epoch} and seed {seed}: resume "
            "with the run's own --batch-size, --limit-train, data and --seed (or start a new --out)")


def set_rng(state: dict) -> None:
    torch.set_rng_state(state["cpu_rng"])
    if "cuda_rng" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
