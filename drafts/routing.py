from django.urls import path

from drafts.pods.consumers import PodConsumer

websocket_urlpatterns = [
    path("ws/pods/<uuid:draft_id>/", PodConsumer.as_asgi()),
]
