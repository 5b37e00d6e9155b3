"""The fake Messages API for tests and benchmarks, re-exported from the package.

The fake itself ships in `orchestrator.demo.fake_api`, because `orchestrate demo` plays its
scripted model on it; tests keep importing it from here. See that package for the details.
"""

from orchestrator.demo.fake_api import *  # noqa: F403
from orchestrator.demo.fake_api import __all__, sdk_facts  # noqa: F401
