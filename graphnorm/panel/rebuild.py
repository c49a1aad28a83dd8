"""The commands that make a panel again, as its model card gives them (``## Rebuild``): the
`graphnorm pretrain` flags of its run's spec, one build per ensemble member at its best step,
then the panel's steps in the order they were taken (ensemble, build, readouts, related,
blend, refit, card)."""
from __future__ import annotations

import json
from pathlib import Path


def rebuild_flags(spec: dict) -> str:
    """The `graphnorm pretrain` flags that make a run of this spec: the size always, and
    every other setting that differs from the default."""
    from graphnorm.pretrain.spec import FLAG_FIELDS, PretrainSpec

    default = PretrainSpec().to_dict()
    always = ("norm", "num_layers", "hidden", "ffn_hidden", "val_percent")
    flags = [f"--{k.replace('_', '-')} {spec[k]}" for k in FLAG_FIELDS
             if k in spec and (k in always or spec[k] != default[k])]
    if spec.get("descriptors"):
        from graphnorm.chem.descriptors import DESCRIPTOR_SETS

        flags.append("--descriptors " + next(name for name, value in DESCRIPTOR_SETS.items()
                                             if value == spec["descriptors"]))
    if spec.get("corpora"):
        flags.append("--corpora " + ",".join(spec["corpora"]))
    if not spec.get("held_out_tasks", True):
        flags.append("--train-every-task")
    if not spec.get("exclude_tdc", True):
        flags.append("--keep-tdc")
    if spec.get("tdc_tables"):
        flags.append("--with-tdc-tables")
    if spec.get("leave_out"):
        flags.append("--leave-out " + ",".join(spec["leave_out"]))
    if spec.get("init_from"):  # a warm start: its schedule goes on from the start's steps
        flags.append(f"--init-from {spec['init_from']}")
    return " ".join(flags)


def member_builds(run: Path) -> tuple[list, bool]:
    """([(seed, best step or None)] of an assembled ensemble's members, whether stored in
    float16); ([], False) for one network. The step is members.json's, else read from the
    member's own run folder where it still is."""
    from graphnorm.pretrain.folder import best_evaluation, read_log

    from .networks import MEMBERS_FILE

    path = run / MEMBERS_FILE
    if not path.is_file():
        return [], False
    record = json.loads(path.read_text())
    builds = [(m["seed"], m.get("step") or best_evaluation(read_log(m["run"])).get("step"))
              for m in record["members"]]
    return builds, bool(record.get("float16"))


def rebuild_lines(run: Path, spec: dict, log: list, best: dict, panel,
                  reference=None) -> list[str]:
    """The commands that make this panel again, step by step as it was made; ``reference``:
    its percentiles' `Reference`, when it has one."""
    members, half = member_builds(run)
    flags = rebuild_flags({**spec, "seed": 0})  # a member's seed is its own line's
    lines = ["## Rebuild", "", "```bash"]
    if members:
        lines += [f"graphnorm pretrain --out RUN_{seed} {flags}" + (f" --seed {seed}" if seed else "")
                  + (f" --max-steps {step}" if step else "   # to its best step")
                  for seed, step in members]
        lines.append("graphnorm panel ensemble RUN "
                     + " ".join(f"RUN_{seed}" for seed, _ in members) + (" --half" if half else ""))
    else:
        lines.append(f"graphnorm pretrain --out RUN {rebuild_flags(spec)} --max-steps "
                     f"{best.get('step', 0)}")
    lines.append("graphnorm panel build RUN")
    if panel.readouts_sha256 is not None:
        backbone = any(e.reads_network for e in panel.endpoints)
        lines.append(f"graphnorm panel readouts RUN{' --backbone' if backbone else ''}")
    if (run / "related.jsonl").is_file() or any(e.by_related for e in panel.endpoints):
        lines.append("graphnorm panel related RUN")
    if any(e.by_blend for e in panel.endpoints):
        lines.append("graphnorm panel blend RUN")
    if panel.refit_of:
        lines += [f"graphnorm pretrain --out REFIT {rebuild_flags(spec)} --max-steps "
                  f"{log[-1].get('step', 0) if log else 0}", "graphnorm panel refit RUN REFIT"]
    final = "REFIT" if panel.refit_of else "RUN"
    if reference is not None:
        lines.append(f"graphnorm panel reference {final}   # percentiles among {reference.name}")
    lines += [f"graphnorm panel card {final}", "```", ""]
    return lines
