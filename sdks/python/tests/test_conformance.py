"""The cross-SDK conformance scenario, against a live service, with the sync and then the async client.

Each client gets a launcher of its own: the scenario consumes rate limits and quotas and expects fresh accounts.
Steps build on each other, so they run in order and a failure marks the ones after it as not run.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional

import pytest

from .conformance import SCENARIO_PATH, Launcher, ScenarioRun, load_scenario

SCENARIO = load_scenario()
STEPS: List[Dict[str, Any]] = SCENARIO["steps"]


class Run:
    def __init__(self, info: Dict[str, Any], asynchronous: bool) -> None:
        self.info = info
        self.run = ScenarioRun(SCENARIO, info, asynchronous)
        self.failed: Optional[str] = None


@pytest.fixture(scope="module")
def launchers() -> Iterator[Dict[str, Launcher]]:
    # Both start at once; the async run's service is ready by the time the sync run is done.
    started = {"sync": Launcher(), "async": Launcher()}
    try:
        yield started
    finally:
        for launcher in started.values():
            launcher.stop()


@pytest.fixture(scope="module", params=["sync", "async"])
def scenario_run(request: pytest.FixtureRequest, launchers: Dict[str, Launcher]) -> Run:
    mode: str = request.param
    return Run(launchers[mode].ready(), asynchronous=mode == "async")


def test_the_launcher_serves_this_scenario_and_every_key_it_uses(scenario_run: Run) -> None:
    info = scenario_run.info
    assert info["scenario"] == str(SCENARIO_PATH)
    for client in SCENARIO["clients"].values():
        if "key" in client:
            assert info["keys"][client["key"]].startswith("agentry_sk_")


@pytest.mark.parametrize("step", STEPS, ids=[step["name"] for step in STEPS])
def test_step(scenario_run: Run, step: Dict[str, Any]) -> None:
    if scenario_run.failed is not None:
        pytest.fail(f'not run: the earlier step "{scenario_run.failed}" failed')
    try:
        scenario_run.run.step(step)
    except BaseException:
        scenario_run.failed = step["name"]
        raise
