"""The pub/sub channel layer (plumbing/channel_layer.py) against a real redis-server of its own, killed and started
again empty: the channels it cut off say so, instead of waiting for ever for what was published meanwhile."""
from __future__ import annotations

import asyncio
import shutil

import pytest

from plumbing.channel_layer import ChannelLayerLost, RedisPubSubChannelLayer
from tests.faults import PrivateRedis

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")


def test_a_lost_redis_connection_fails_the_receives_of_its_channels(tmp_path):
    redis = PrivateRedis(tmp_path)
    redis.start()

    async def scenario():
        layer = RedisPubSubChannelLayer(hosts=[{"address": redis.url, "socket_timeout": None}], prefix="t")
        waiting, idle = await layer.new_channel(), await layer.new_channel()
        for channel in (waiting, idle):
            await layer.group_add("pod", channel)
        await layer.group_send("pod", {"type": "before"})
        assert [await asyncio.wait_for(layer.receive(c), 5) for c in (waiting, idle)] == [{"type": "before"}] * 2
        receiving = asyncio.ensure_future(layer.receive(waiting))
        await asyncio.to_thread(redis.restart, 1.0)  # SIGKILL, 1 s down, back empty
        with pytest.raises(ChannelLayerLost):
            await asyncio.wait_for(receiving, 5)  # the socket waiting on it is closed (the page reconnects)
        with pytest.raises(ChannelLayerLost):
            await asyncio.wait_for(layer.receive(idle), 5)  # and one busy elsewhere, at its next receive
        fresh = await layer.new_channel()  # what the reconnected page gets: a new subscription, and its messages
        await layer.group_add("pod", fresh)
        await layer.group_send("pod", {"type": "after"})  # on a new connection, not one kept from before
        assert await asyncio.wait_for(layer.receive(fresh), 5) == {"type": "after"}
        await layer.flush()

    try:
        asyncio.run(scenario())
    finally:
        redis.stop()


def test_a_subscription_is_in_place_when_group_add_returns(tmp_path):
    """Pub/sub keeps nothing, so what is published to a group before Redis has taken the SUBSCRIBE is lost: the
    layer returns from new_channel / group_add only once Redis confirmed it. Checked from another connection,
    sent the moment group_add returns, many times over."""
    import redis.asyncio as aioredis

    redis = PrivateRedis(tmp_path)
    redis.start()

    async def scenario():
        layer = RedisPubSubChannelLayer(hosts=[{"address": redis.url, "socket_timeout": None}], prefix="t")
        other = RedisPubSubChannelLayer(hosts=[{"address": redis.url, "socket_timeout": None}], prefix="t")
        probe = aioredis.from_url(redis.url)
        missing = []
        for i in range(40):
            channel = await layer.new_channel()
            await layer.group_add(f"pod{i}", channel)
            subscribers = dict(await probe.pubsub_numsub(layer._get_layer()._get_group_channel_name(f"pod{i}")))
            if not any(subscribers.values()):
                missing.append(i)
            await other.group_send(f"pod{i}", {"type": "first"})
            assert await asyncio.wait_for(layer.receive(channel), 5) == {"type": "first"}
        assert not missing, f"group_add returned before Redis took the subscription, {len(missing)} times of 40"
        await probe.aclose()
        await layer.flush()
        await other.flush()

    try:
        asyncio.run(scenario())
    finally:
        redis.stop()
