"""``graphnorm panel ship RUN``: install a run's model, panel and model card as the
ADMET panel graphnorm ships (``graphnorm/pretrained/admet/``: what ``graphnorm admet`` reads
without ``--model`` and ``--init-from admet`` fine-tunes).

The three files must belong together before anything is replaced: the panel names the
checkpoint it was built from by its sha256, and so does the card; the checkpoint must load
with ``weights_only``; the folder must stay under the wheel's budget for weights. The
folder is written beside the old one and swapped in, so an interrupted ship leaves the
previous panel whole. ``source.json`` records where the files came from.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Optional

from graphnorm.pretrain.folder import BEST_FILE, LOG_FILE, SPEC_FILE
from .card import CARD_FILE
from graphnorm.panel import PANEL_FILE, Panel, PanelFileError
from graphnorm.panel.boosters import BUNDLE_FILE
from graphnorm.panel.networks import check_built_for, load_networks, member_file
from graphnorm.panel.reference import REFERENCE_FILE, read_reference

SHIPPED_FILES = (BEST_FILE, PANEL_FILE, CARD_FILE)
# issues 58 and 68: all package data (every shipped model, this panel and the rest of
# graphnorm/pretrained/) inside the wheel, at most 15 MB
MAX_SHIPPED_BYTES = 15 * 2 ** 20
SOURCE_FILE = "source.json"


class ShipError(ValueError):
    pass


def shipped_folder() -> Path:
    """Where the installed package keeps its ADMET panel."""
    from graphnorm.pretrained import admet_panel_path

    return admet_panel_path()


def check_shippable(run: Path, beside: int = 0) -> dict:
    """What ``source.json`` will say, once every check passed; ShipError naming the first
    that fails. ``beside``: bytes of package data that stay beside the panel (shipping into
    the package: `package_data_beside`), counted with it against `MAX_SHIPPED_BYTES`."""
    from graphnorm.checkpoints import CheckpointError

    run = Path(run)
    missing = [name for name in SHIPPED_FILES if not (run / name).is_file()]
    if missing:
        raise ShipError(f"{run}: no {', '.join(missing)} -- build them first (`graphnorm "
                        "panel build RUN`, then `graphnorm panel card RUN`)")
    try:
        panel = Panel.read(run / PANEL_FILE)
    except PanelFileError as err:
        raise ShipError(str(err)) from err
    try:
        check_built_for(panel, run)
    except PanelFileError as err:
        raise ShipError(f"{err}, then the card (graphnorm panel card RUN)") from err
    sha = panel.checkpoint_sha256  # the file's, as check_built_for just compared
    if sha[:16] not in (run / CARD_FILE).read_text():
        raise ShipError(f"{run / CARD_FILE} describes another checkpoint than {run / BEST_FILE}: "
                        "rebuild it (panel card)")
    if panel.readouts_sha256 is not None:  # a hybrid panel (panel readouts) ships its boosters
        bundle = run / BUNDLE_FILE
        if not bundle.is_file() or (hashlib.sha256(bundle.read_bytes()).hexdigest()
                                    != panel.readouts_sha256):
            raise ShipError(f"{run / PANEL_FILE} names boosters that {bundle} does not hold: "
                            "rebuild them (panel readouts), then the card (panel card)")
    try:
        load_networks(run)
    except (CheckpointError, PanelFileError) as err:
        raise ShipError(f"{run}: a network does not load: {err}") from err
    try:
        read_reference(run)  # percentiles of this very panel.json, or none
    except PanelFileError as err:
        raise ShipError(str(err)) from err
    size = sum((run / name).stat().st_size for name in shipped_files(panel, run))
    if size + beside > MAX_SHIPPED_BYTES:
        where = f" beside {beside / 2 ** 20:.1f} MB of other package data" if beside else ""
        raise ShipError(f"{run}: {size / 2 ** 20:.1f} MB to ship{where}, more than the wheel's "
                        f"{MAX_SHIPPED_BYTES / 2 ** 20:.0f} MB of package data (graphnorm panel "
                        "ensemble --half stores members in half the bytes)")
    spec = json.loads((run / SPEC_FILE).read_text()) if (run / SPEC_FILE).is_file() else {}
    steps = [json.loads(line).get("step") for line in (run / LOG_FILE).read_text().splitlines()
             if line.strip()] if (run / LOG_FILE).is_file() else []
    return {"run": run.name, "checkpoint_sha256": sha, "member_sha256": panel.member_sha256,
            "corpus_sha256": panel.corpus_sha256,
            "endpoints_shown": panel.shown, "steps_trained": max(steps, default=None),
            "spec": spec}


def shipped_files(panel: Panel, run: Path) -> tuple:
    """The files a run ships: the boosters' bundle too when its panel is hybrid, every
    member's checkpoint when it averages several networks, and its percentiles when it has
    them (`panel reference`)."""
    members = tuple(member_file(".", k).name for k in range(1, len(panel.checkpoints)))
    return SHIPPED_FILES + members + ((BUNDLE_FILE,) if panel.readouts_sha256 is not None else ()) \
        + ((REFERENCE_FILE,) if (Path(run) / REFERENCE_FILE).is_file() else ())


def package_data_beside(dest: Path) -> int:
    """Bytes of the package data that stays when ``dest`` (the package's panel folder) is
    replaced: every other file of graphnorm/pretrained/."""
    root = dest.parent
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()
               and dest not in p.parents and "__pycache__" not in p.parts)


def ship(run: Path, dest: Optional[Path] = None) -> Path:
    """Copy ``run``'s shipped files into ``dest`` (default `shipped_folder`), replacing what
    was there only once the new folder is complete. Into the package's own folder, the panel
    and the rest of the package data must stay within `MAX_SHIPPED_BYTES`."""
    dest = Path(dest) if dest is not None else shipped_folder()
    into_package = dest.resolve() == shipped_folder().resolve()
    source = check_shippable(run, package_data_beside(dest) if into_package else 0)
    fresh, old = dest.with_name(dest.name + ".new"), dest.with_name(dest.name + ".old")
    for leftover in (fresh, old):  # an earlier ship interrupted half-way
        shutil.rmtree(leftover, ignore_errors=True)
    try:
        fresh.mkdir(parents=True)
    except PermissionError as err:  # an installed package the user may not write to
        raise ShipError(f"cannot write beside {dest} ({err.strerror}): ship into a folder "
                        "of yours with `graphnorm panel ship RUN --to FOLDER`, and read it with graphnorm admet "
                        "--model FOLDER") from err
    for name in shipped_files(Panel.read(Path(run) / PANEL_FILE), run):
        shutil.copyfile(Path(run) / name, fresh / name)
    (fresh / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n")
    if dest.exists():
        dest.rename(old)
    fresh.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    return dest
