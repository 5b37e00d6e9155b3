"""``python -m tests.fake_api``: the same as ``python -m orchestrator.demo.fake_api``."""

import sys

from orchestrator.demo.fake_api.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
