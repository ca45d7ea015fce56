from django.conf import settings


def site(request):
    """Template context shared by every page."""
    return {"stack": settings.STACK}
