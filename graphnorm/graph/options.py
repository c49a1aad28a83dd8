"""Option names of the Graphormer config, importable without torch so that the CLI offers
exactly these (graphnorm/graph/__init__.py loads the model modules on first use)."""
SEP_SLOTS = ("all", "final", "blocks")  # where `norm` goes; the other slots get `other_norm`
# what the head reads: the [VNode], a sum / mean of the atom tokens, or the [VNode] beside one
READOUTS = ("vnode", "sum", "mean", "vnode+sum", "vnode+mean")
LOCAL_MP = ("none", "gine")  # message passing beside attention in every block (GraphGPS)
# where a molecule's fingerprint enters the Graphormer: added to the [VNode] before the first
# block, or beside the readout at the head's input (then no norm of the [VNode] sees it)
FINGERPRINT_AT = ("vnode", "head")
