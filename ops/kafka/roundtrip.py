"""Exit 0 when a produce/consume round trip through the broker at argv[1] succeeds (ops/kafka/start)."""

import asyncio
import sys
import uuid

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


async def main(servers: str) -> int:
    topic = "ops-roundtrip"
    token = uuid.uuid4().hex.encode()
    producer = AIOKafkaProducer(bootstrap_servers=servers, acks="all", request_timeout_ms=5000)
    await producer.start()
    try:
        md = await producer.send_and_wait(topic, token)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(bootstrap_servers=servers, enable_auto_commit=False)
    await consumer.start()
    try:
        from aiokafka import TopicPartition

        tp = TopicPartition(topic, md.partition)
        consumer.assign([tp])
        consumer.seek(tp, md.offset)
        got = await consumer.getmany(tp, timeout_ms=5000)
        return 0 if any(m.value == token for m in got.get(tp, [])) else 1
    finally:
        await consumer.stop()


if __name__ == "__main__":
    sys.exit(asyncio.run(asyncio.wait_for(main(sys.argv[1]), 20)))
