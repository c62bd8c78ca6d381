"""`python -m graphs.cli`: the `reflexion` command without its installed script."""

import sys

from graphs.cli import main

sys.exit(main())
