"""Online draft pods: people (and bots) drafting together over websockets.

- :mod:`drafts.pods.service`: lobby, seats bound to people, picks under a row lock, timers; what each
  seat may see (the pod's truth is the ``Draft`` row).
- :mod:`drafts.pods.tasks`: the Celery pick timers, and publishing an outcome (above the service).
- :mod:`drafts.pods.consumers`: ws/pods/<id>/, one socket per seat.
- :mod:`drafts.pods.views` and :mod:`drafts.pods.api`: the pages (lobby, pod, deck builder, my drafts,
  consent, sign-up) and the /api/pods routes; their URLs are in ``drafts.urls`` and ``drafts.api_urls``.
"""
