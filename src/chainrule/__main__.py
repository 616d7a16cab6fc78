"""``python -m chainrule``: the same as the ``chainrule`` console command."""

import sys

from .apps.cli import main

if __name__ == "__main__":
    sys.exit(main())
