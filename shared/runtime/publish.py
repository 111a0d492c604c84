"""Outputs to records, records to the broker, and the wait for its acknowledgements (docs/architecture.md section 4).

``Encoder`` turns a cube's ``Output``s into records: each output's topic must be
one the cube declares, its message must be that topic's model (a wrong one is a
bug: ``PublishContractError``), and its key defaults to the topic's key field.
``await_deliveries`` is the wait the commit order is built on (step 2 in
``commits.py``): every record sent was acknowledged, or ``BusUnavailable``.
``publish_outputs`` does all three at once for whoever publishes outside a
handler's commit (the HTTP cubes, through ``Deps.publish``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol

from shared import contracts
from shared.bus.base import Headers, Producer
from shared.errors import BusUnavailable, PublishContractError, TurbocubesError
from shared.metrics import PUBLISHED
from shared.runtime.cube import Output

__all__ = ["Encoder", "Send", "await_deliveries", "emitter", "publish_outputs", "reset_producer"]

#: one record to send: topic, key, value, headers
Send = tuple[str, bytes | None, bytes, Headers]


class Encoder:
    """The records for one cube's outputs (``declared`` None: any catalog topic, for ``Deps.publish``)."""

    __slots__ = ("_by_topic", "cube", "declared")

    def __init__(self, cube: str, declared: Sequence[str] | None) -> None:
        self.cube = cube
        self.declared = None if declared is None else frozenset(declared)
        self._by_topic: dict[str, tuple[type, str, Callable[[Any], bytes]]] = {}

    def _lookup(self, topic: str) -> tuple[type, str, Callable[[Any], bytes]]:
        if self.declared is not None and topic not in self.declared:
            raise PublishContractError(f"cube {self.cube} does not declare output {topic}")
        t = contracts.topic(topic)
        return t.model, t.key, t.model.__pydantic_serializer__.to_json

    def encode(self, outputs: Iterable[Output]) -> list[Send]:
        # on every handled message's path: one dict lookup per output, the rest cached per topic
        by_topic = self._by_topic
        sends: list[Send] = []
        for out in outputs:
            enc = by_topic.get(out.topic)
            if enc is None:
                enc = by_topic[out.topic] = self._lookup(out.topic)
            model, key_field, to_json = enc
            message = out.message
            if type(message) is not model:
                raise PublishContractError(f"{out.topic} carries {model.__name__}, not {type(message).__name__}")
            key = out.key if out.key is not None else getattr(message, key_field, None)
            sends.append((out.topic, key.encode() if key is not None else None, to_json(message), out.headers))
        return sends


async def await_deliveries(producer: Producer, deliveries: Sequence[asyncio.Future[Any]]) -> None:
    """Flush and wait until every delivery is acknowledged; an engine's own failure becomes ``BusUnavailable``."""
    try:
        await producer.flush()
        for f in deliveries:
            if not f.done():
                await f
            elif (exc := f.exception()) is not None:
                raise exc
    except TurbocubesError:
        raise
    except Exception as exc:  # an engine's own delivery error: the broker did not take it
        raise BusUnavailable(f"delivery failed: {type(exc).__name__}: {exc}") from exc


async def reset_producer(producer: Producer) -> None:
    """``producer.reset()`` after a delivery failure (Kafka: out-of-order sequence numbers forever after
    a broker restart, which would fail every later send); a reset that fails is the next send's problem."""
    with contextlib.suppress(Exception):
        await producer.reset()


async def publish_outputs(
    producer: Producer, encoder: Encoder, outputs: Sequence[Output], *, sent: dict[str, int] | None = None
) -> int:
    """Validate, send and await the acknowledgement of ``outputs``; how many records went out.

    ``sent`` counts them per topic for the caller's ``Meter``; without it they are counted
    in ``turbocubes_published_total`` here.
    """
    sends = encoder.encode(outputs)
    if not sends:
        return 0
    # one future for the whole batch (the embedded log writes it in one transaction)
    futs = [await producer.send_batch(sends)]
    try:
        await await_deliveries(producer, futs)
    except Exception:
        await reset_producer(producer)
        raise
    for topic, *_ in sends:
        if sent is None:
            PUBLISHED.labels(encoder.cube, topic).inc()
        else:
            sent[topic] = sent.get(topic, 0) + 1
    return len(sends)


class _Published(Protocol):
    published: int


def emitter(
    producer: Producer, encoder: Encoder, sent: dict[str, int], stats: _Published
) -> Callable[[Sequence[Output]], Awaitable[int]]:
    """A runner's ``Context.emit``: a cube's outputs validated, sent and acknowledged now, and counted."""

    async def emit(outputs: Sequence[Output]) -> int:
        n = await publish_outputs(producer, encoder, outputs, sent=sent)
        stats.published += n
        return n

    return emit
