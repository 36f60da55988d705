"""`python -m scalecheck` runs the command line."""

import sys

from scalecheck.cli import main

sys.exit(main())
