"""The pub/sub channel layer of the services stack (``MTG_CHANNEL_LAYER=pubsub``, the default).

channels_redis' ``RedisPubSubChannelLayer`` sends a group message as one PUBLISH that every process
subscribed to the group receives once; its core layer keeps a sorted-set queue per channel, popped one
message at a time with several round trips each. The pub/sub layer held more pods under 200 ms
(docs/reliability.md#scale-out), but it has one gap: a consumer's ``receive`` waits on a queue in the
process, so it never fails when Redis goes. redis-py subscribes its connection again when it reconnects,
and what was published in the meantime, or to a Redis that came back empty before the subscription did,
is lost without anyone knowing: a socket stays open and hears nothing (a pack that never reaches a seat).

This layer makes a lost Redis connection what it is with the core layer: every ``receive`` waiting on
that connection fails, so Daphne closes those sockets; the pages reconnect, join their groups again
(subscribing afresh) and get their view again (docs/reliability.md#faults).
"""
from __future__ import annotations

import asyncio
import logging

from channels_redis import pubsub
from channels_redis.utils import _close_redis, decode_hosts
from redis import exceptions as redis_errors
from redis.asyncio.client import PubSub

log = logging.getLogger(__name__)


class ChannelLayerLost(ConnectionError):
    """The channel layer's Redis connection was lost while this channel waited: messages may be gone."""


_LOST = object()  # put in the queue of each channel cut off by a lost connection


class RedisPubSubChannelLayer(pubsub.RedisPubSubChannelLayer):
    def _get_layer(self):
        loop = asyncio.get_running_loop()
        layer = self._layers.get(loop)
        if layer is None:
            layer = self._layers[loop] = _LoopLayer(*self._args, **self._kwargs, channel_layer=self)
            pubsub._wrap_close(self, loop)
        return layer

    def deserialize(self, message):
        if message is _LOST:
            raise ChannelLayerLost("the channel layer lost its Redis connection; reconnect")
        return super().deserialize(message)


class _LoopLayer(pubsub.RedisPubSubLoopLayer):
    def __init__(self, hosts=None, *args, **kwargs):
        super().__init__(hosts, *args, **kwargs)
        self._shards = [_Shard(host, self) for host in decode_hosts(hosts)]

    async def receive(self, channel):
        try:
            return await super().receive(channel)
        except ChannelLayerLost:
            self.channels.pop(channel, None)
            raise

    def cut_off(self, shard) -> None:
        """``shard`` lost its connection: every channel subscribed through it, directly or by a group, is told
        (its receive fails, after the messages it still holds) and leaves its groups; the groups of that shard go."""
        cut = {name for name in self.channels if self._get_shard(name) is shard}
        for group in [g for g in self.groups if self._get_shard(g) is shard]:
            cut |= self.groups.pop(group)
        for members in self.groups.values():
            members -= cut
        for name in cut:
            if name in self.channels:
                self.channels[name].put_nowait(_LOST)
        if cut:
            log.warning("channel layer: Redis connection lost, %d channels closed", len(cut))


class _PubSub(PubSub):
    """redis-py subscribes a connection again when it reconnects (and may reconnect inside a read, without an
    error): here a reconnection of a connection that had subscriptions cuts their channels off instead."""

    def __init__(self, shard: "_Shard", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.shard = shard

    async def handle_message(self, response, ignore_subscribe_messages=False):
        if isinstance(response, (list, tuple)) and len(response) > 1 and response[0] in (b"subscribe", "subscribe"):
            name = response[1]
            self.shard.confirmed(name.decode() if isinstance(name, bytes) else name)
        return await super().handle_message(response, ignore_subscribe_messages)

    async def on_connect(self, connection):
        if self.channels or self.patterns:
            self.channels.clear()
            self.patterns.clear()
            self.shard.connection_lost()
        await super().on_connect(connection)


class _Shard(pubsub.RedisSingleShardConnection):
    LOST = (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)
    CONFIRM_SECONDS = 2.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._confirming: dict[str, asyncio.Future] = {}

    async def subscribe(self, channel):
        """Subscribe, and wait until Redis confirms it (at most CONFIRM_SECONDS). Pub/sub keeps nothing: a message
        published before Redis has taken the SUBSCRIBE is lost, and a consumer publishes right after it joins (a
        pod seat's first view, the pick a connecting socket settles); channels_redis returns once the command is
        sent. Under load the suite lost such a first view (the pod consumer tests of the timer and of a healed view)."""
        if channel in self._subscribed_to:
            return
        waiter = self._confirming.setdefault(channel, asyncio.get_running_loop().create_future())
        try:
            await super().subscribe(channel)
            await asyncio.wait_for(asyncio.shield(waiter), self.CONFIRM_SECONDS)
        except asyncio.TimeoutError:
            log.warning("channel layer: Redis did not confirm the subscription to %s in %.0f s", channel,
                        self.CONFIRM_SECONDS)
        finally:
            self._confirming.pop(channel, None)

    def confirmed(self, name: str) -> None:
        waiter = self._confirming.get(name)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _ensure_redis(self):
        if self._redis is None:
            super()._ensure_redis()
            self._pubsub = _PubSub(self, self._redis.connection_pool)

    async def publish(self, channel, message):
        try:
            await super().publish(channel, message)
        except self.LOST:
            # a connection kept from before Redis restarted fails on its first use (when the receive loop was
            # reconnected inside a read, its pool was not replaced): every idle one reconnects, and once more
            await self._redis.connection_pool.disconnect(inuse_connections=False)
            await super().publish(channel, message)

    def connection_lost(self) -> None:
        self.channel_layer.cut_off(self)
        self._subscribed_to = set()

    async def _do_receiving(self):
        """channels_redis' receive loop, except that a lost connection cuts its channels off (above) at once and
        starts a subscription with nothing in it, instead of retrying and subscribing the old ones again."""
        while True:
            try:
                if self._pubsub and self._pubsub.subscribed:
                    message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
                    self._receive_message(message)
                else:
                    await asyncio.sleep(0.1)
            except (asyncio.CancelledError, asyncio.TimeoutError, GeneratorExit):
                raise
            except self.LOST:
                # a new pool too: the connections the publishes keep in the old one went with Redis (the first
                # publish on each would fail after Redis came back)
                old = (self._pubsub, self._redis)
                self._redis = self._pubsub = None
                self._ensure_redis()
                self.connection_lost()
                for closing in (old[0].aclose(), _close_redis(old[1])):
                    try:
                        await closing
                    except self.LOST:  # the connections are gone already
                        pass
                await asyncio.sleep(0.1)
            except BaseException:
                log.exception("Unexpected exception in the channel layer's receive task")
                await asyncio.sleep(1)
