"""Launch the embviz window on the default model (or --model ...)."""

import sys

from embviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
