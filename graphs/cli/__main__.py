"""`python -m reflexion_agents.graphs.cli`: the `reflexion` command without its installed script."""

import sys

from reflexion_agents.graphs.cli import main

sys.exit(main())
