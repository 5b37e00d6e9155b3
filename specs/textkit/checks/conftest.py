"""The checks run from the project directory: its `textkit/` package is the one tested."""

import os
import sys

if os.getcwd() not in sys.path:  # `python3 -m pytest` adds it; plain `pytest` does not
    sys.path.insert(0, os.getcwd())
