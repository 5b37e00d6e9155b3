import sys

from textkit.cli import main

sys.exit(main())
