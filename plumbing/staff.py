"""Staff-only pages: anonymous visitors are sent to log in, signed-in non-staff get a 403."""
import functools

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied


def staff_only(view):
    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("This page is for staff.")
        return view(request, *args, **kwargs)
    return wrapper
