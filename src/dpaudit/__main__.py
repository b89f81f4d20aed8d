"""``python -m dpaudit``: the same as the ``dpaudit`` command (see :mod:`dpaudit.cli`)."""

import sys

from dpaudit.cli import main

if __name__ == "__main__":
    sys.exit(main())
