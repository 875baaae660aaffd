"""Give a browser a real page for a 405, with navigation and the reason.

Django's `require_POST` answers a GET with an empty 405, which a browser shows as its own
error screen. A POST-only address is often opened from history or a pasted link, so the
user gets a page that says what the address is for and how to get back.
"""

from django.template.loader import render_to_string


class MethodNotAllowedPageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code == 405 and not response.content and wants_html(request):
            allowed = response.get("Allow", "")
            context = {"allowed": allowed, "method": request.method, "request_path": request.path}
            response.content = render_to_string("405.html", context, request=request)
            response["Content-Type"] = "text/html; charset=utf-8"
        return response


def wants_html(request) -> bool:
    """A browser navigation, not an API client or an htmx swap."""
    return "text/html" in request.headers.get("Accept", "") and not request.headers.get("HX-Request")
