"""A vendor simulator on a free port for every judges test that asks for one."""

import pytest

from simulator import SimModel, Simulator, start_in_thread

# A model that is always right and never flips, so every reject and every error in a test
# can be traced to the item's truth or to an injected fault.
TEST_MODELS = {
    "sim-perfect": SimModel(
        family="simulated",
        catch_probability=1.0,
        false_reject_probability=0.0,
        flip_probability=0.0,
        class_accuracy=1.0,
        latency_ms=2,
        retry_after_s=0.05,
        hang_s=2.5,
    ),
    "sim-slow": SimModel(
        catch_probability=1.0, false_reject_probability=0.0, flip_probability=0.0, latency_ms=25, retry_after_s=0.05
    ),
}


@pytest.fixture
def vendor_simulator(settings):
    """Start the simulator in a thread; point settings.VENDOR_SIMULATOR_URL at it."""
    simulator = Simulator(models=TEST_MODELS)
    server, url = start_in_thread(simulator)
    settings.VENDOR_SIMULATOR_URL = url
    simulator.url = url
    yield simulator
    server.shutdown()
    server.server_close()
