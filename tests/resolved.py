"""The TrainConfig a command line resolves to, for tests: its flags (`config_flags`) and config
file through the public `graphnorm.train.resolve.resolve_config`, the user's table read by the
data layer's reader and notes printed, as the CLI does."""
from graphnorm.cli import build_parser
from graphnorm.data.table import read_table
from graphnorm.train.cli import config_flags
from graphnorm.train.config import read_yaml
from graphnorm.train.recipes import print_note
from graphnorm.train.resolve import resolve_config


def resolved(argv):
    args = build_parser().parse_args(argv)
    return resolve_config(read_yaml(args.config) if args.config else None, config_flags(args),
                          read_table=read_table, note=print_note)
