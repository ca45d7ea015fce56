"""Diagnostic variant of mtgsite.asgi for bench/pods.py --asgi bench.pods_asgi:application.

Channels runs every ``database_sync_to_async`` call of every websocket consumer of a Daphne process
on asgiref's single shared thread (thread_sensitive=True, no ThreadSensitiveContext around a
consumer), so all pods' database work is serialised. This wrapper gives each connection its own
ThreadSensitiveContext (one sync thread per socket), to measure how much of the pick latency that
single thread accounts for. Not used by the site. (The channel layer is a setting: MTG_CHANNEL_LAYER.)
"""
from asgiref.sync import ThreadSensitiveContext

from mtgsite.asgi import application as site_application


async def application(scope, receive, send):
    if scope["type"] != "websocket":
        return await site_application(scope, receive, send)
    async with ThreadSensitiveContext():
        return await site_application(scope, receive, send)

