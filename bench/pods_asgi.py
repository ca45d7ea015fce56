"""Diagnostic variant of mtgsite.asgi for bench/pods.py --asgi bench.pods_asgi:application.

Channels runs every ``database_sync_to_async`` call of every websocket consumer of a Daphne process
on asgiref's single shared thread (thread_sensitive=True, no ThreadSensitiveContext around a
consumer), so all pods' database work is serialised. This wrapper gives each connection its own
ThreadSensitiveContext (one sync thread per socket), to measure how much of the pick latency that
single thread accounts for. Not used by the site.

``pubsub_application`` serves the site with channels_redis' pub/sub channel layer instead of the
settings' core layer (load only: run it with --no-faults), to measure what the channel layer costs.
"""
from asgiref.sync import ThreadSensitiveContext

from mtgsite.asgi import application as site_application


async def application(scope, receive, send):
    if scope["type"] != "websocket":
        return await site_application(scope, receive, send)
    async with ThreadSensitiveContext():
        return await site_application(scope, receive, send)


def _pubsub_site():
    """The site with channels_redis' RedisPubSubChannelLayer in this process (a diagnostic for
    ``--asgi bench.pods_asgi:pubsub_application --no-faults``: the Celery worker keeps the settings'
    layer, so only the load part is meaningful). A group message is one PUBLISH that each process
    subscribed to the group receives once, instead of the core layer's sorted-set queue popped one
    message at a time with several round trips each."""
    from django.conf import settings

    layer = settings.CHANNEL_LAYERS["default"]
    if layer["BACKEND"] == "channels_redis.core.RedisChannelLayer":
        layer["BACKEND"] = "channels_redis.pubsub.RedisPubSubChannelLayer"
    return site_application


_pubsub = None


async def pubsub_application(scope, receive, send):
    global _pubsub
    if _pubsub is None:
        _pubsub = _pubsub_site()
    return await _pubsub(scope, receive, send)
