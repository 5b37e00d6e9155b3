"""A metering proxy in a process of its own, for kill -9 tests: `python -m tests.metering_proxy_child ROOT`.

It books into the state journal of project ROOT, forwards to the API of its environment
(ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY), prints `<base url> <dummy key>` and serves until killed.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from orchestrator.claude_code.metering.metering_proxy import MeteringProxy
from orchestrator.claude_code.metering.upstream import Upstream
from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.spend import Spend
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state import StateStore

if __name__ == "__main__":
    store = StateStore(ProjectPaths.for_project(Path(sys.argv[1])))
    client = ModelClient(RunConfig().client_settings(), None, Spend(feature_id="feat-a"), journal=store.record_spend)
    with MeteringProxy(upstream=Upstream.from_environment(), client=client, models={"claude-sonnet-5-5"}, feature_id="feat-a", attempt=1,
                       on_event=lambda _event: None) as proxy:
        print(proxy.base_url, proxy.token, flush=True)
        threading.Event().wait()
