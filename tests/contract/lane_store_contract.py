"""The crawl-lane store's contract, written once and run on both engines."""

from __future__ import annotations

from shared.stores import LaneState, RobotsRecord, Stores

T0 = 1_800_000_000.0


def lane(host: str = "a.example", *, paused_until: float = 0.0, rate: float = 0.5, at: float = T0) -> LaneState:
    return LaneState(
        host=host,
        paused_until=paused_until,
        pause_reason="Retry-After 3600 s (throttled)" if paused_until else "",
        rate=rate,
        incidents=1,
        last_incident_at=at - 5.0,
        latency_avg_s=0.25,
        crawl_delay=2.0,
        not_before=at + 2.0,
        updated_at=at,
    )


class LaneStoreContract:
    async def test_a_lane_round_trips(self, stores: Stores) -> None:
        assert await stores.lanes.get_lane("a.example") is None
        saved = lane(paused_until=T0 + 3600.0)
        await stores.lanes.put_lanes([saved, lane("b.example")])
        assert await stores.lanes.get_lane("a.example") == saved
        got = await stores.lanes.get_lane("b.example")
        assert got is not None
        assert (got.paused_until, got.last_incident_at) == (0.0, T0 - 5.0)

    async def test_a_pause_is_never_shortened_and_an_older_save_never_wins(self, stores: Stores) -> None:
        await stores.lanes.put_lanes([lane(paused_until=T0 + 3600.0, rate=0.5)])
        # a newer save that knows of no pause (a new owner that has not read it, say): rate yes, pause no
        await stores.lanes.put_lanes([lane(paused_until=0.0, rate=0.8, at=T0 + 10)])
        got = await stores.lanes.get_lane("a.example")
        assert got is not None
        assert (got.paused_until, got.rate) == (T0 + 3600.0, 0.8)
        assert got.pause_reason.startswith("Retry-After")
        # a save from before (a dying previous owner's last write arriving late) changes nothing
        await stores.lanes.put_lanes([lane(paused_until=T0 + 7200.0, rate=0.1, at=T0 + 5)])
        assert await stores.lanes.get_lane("a.example") == got

    async def test_robots_round_trip_and_the_newest_fetch_wins(self, stores: Stores) -> None:
        origin = "https://a.example"
        assert await stores.lanes.get_robots(origin) is None
        parsed = RobotsRecord(origin, T0, T0 + 86_400.0, None, "User-agent: *\nDisallow: /x\n", "robots_denied", "")
        await stores.lanes.put_robots(parsed)
        assert await stores.lanes.get_robots(origin) == parsed
        down = RobotsRecord(origin, T0 + 60, T0 + 360, False, None, "robots_denied", "robots.txt unreachable")
        await stores.lanes.put_robots(down)
        assert await stores.lanes.get_robots(origin) == down
        await stores.lanes.put_robots(parsed)  # older than what is stored
        assert await stores.lanes.get_robots(origin) == down
        allow = RobotsRecord(origin, T0 + 120, T0 + 999, True, None, "ok", "")
        await stores.lanes.put_robots(allow)
        got = await stores.lanes.get_robots(origin)
        assert got is not None
        assert got.allow_all is True
