"""``python -m graphnorm.cli``: the same as the ``graphnorm`` console script."""
import sys

from graphnorm.cli import main

sys.exit(main())
