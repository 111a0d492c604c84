"""runtime.event_loop: a process runs on the loop its settings name (shared/runtime/loops.py)."""

from __future__ import annotations

import asyncio
import inspect

import pytest
import uvloop

from shared.config import load_settings
from shared.errors import ConfigError
from shared.runtime.loops import loop_kind, new_event_loop
from shared.runtime.shutdown import run_main


async def _running_loop() -> type[asyncio.AbstractEventLoop]:
    return type(asyncio.get_running_loop())


def test_auto_is_uvloop_for_kafka_and_asyncio_for_the_embedded_log() -> None:
    # measured: uvloop pays on the real engines, not on the embedded ones (loops.py)
    assert loop_kind("auto", "kafka://127.0.0.1:9092") == "uvloop"
    assert loop_kind("auto", "sqlite:///var/bus.db") == "asyncio"
    assert loop_kind("uvloop", "sqlite:///var/bus.db") == "uvloop"
    assert loop_kind("asyncio", "kafka://127.0.0.1:9092") == "asyncio"
    assert load_settings(None, env={}).runtime.event_loop == "auto"


@pytest.mark.parametrize(("choice", "expected"), [("uvloop", uvloop.Loop)])
def test_a_process_runs_on_the_loop_it_was_given(choice: str, expected: type) -> None:
    assert issubclass(run_main(_running_loop(), event_loop=choice), expected)


def test_asyncio_is_the_standard_loop() -> None:
    got = run_main(_running_loop(), event_loop="asyncio")
    assert not issubclass(got, uvloop.Loop)
    assert issubclass(got, asyncio.BaseEventLoop)


def test_an_unknown_loop_fails_naming_the_key() -> None:
    main = _running_loop()
    with pytest.raises(ConfigError) as err:
        run_main(main, event_loop="trio")
    assert err.value.key == "runtime.event_loop"
    assert inspect.getcoroutinestate(main) == inspect.CORO_CLOSED  # not left to warn that it was never awaited
    with pytest.raises(ConfigError):
        load_settings(None, env={"TURBOCUBES_RUNTIME_EVENT_LOOP": "trio"})


def test_new_event_loop_makes_a_fresh_loop_each_time() -> None:
    a, b = new_event_loop("asyncio"), new_event_loop("uvloop")
    try:
        assert not isinstance(a, uvloop.Loop)
        assert isinstance(b, uvloop.Loop)
    finally:
        a.close()
        b.close()
