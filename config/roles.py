"""Roles: four groups, one helper to check them, one decorator for views.

Every page already requires login (Django's LoginRequiredMiddleware); a view then says
which roles may use it with `@role_required(...)`. An anonymous visitor is sent to the
login page; a logged-in user without the role gets 403. Members of `admin` (and
superusers) pass every role check: they run the system.
"""

from functools import wraps

from django.apps import apps
from django.core.exceptions import PermissionDenied

LABELLER = "labeller"
ANALYST = "analyst"
ML_ENGINEER = "ml_engineer"
ADMIN = "admin"
ALL_ROLES = (LABELLER, ANALYST, ML_ENGINEER, ADMIN)

# Model permissions each group gets (app_label.codename patterns); admin gets all.
ROLE_PERMISSIONS = {
    LABELLER: ["labelling.add_label", "labelling.view_label", "labelling.view_query"],
    ANALYST: ["labelling.view_query", "labelling.add_label", "triage.view_triageitem", "triage.change_triageitem"],
    ML_ENGINEER: [
        "labelling.view_query",
        "labelling.view_goldset",
        "judges.add_judge",
        "judges.change_judge",
        "judges.view_judge",
        "judges.add_calibrationrun",
        "judges.view_calibrationrun",
        "judges.view_verdict",
    ],
}


def user_roles(user) -> set[str]:
    """Return the role names a user holds; admins and superusers hold every role."""
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_docket_roles", None)
    if cached is not None:
        return cached
    names = set(user.groups.filter(name__in=ALL_ROLES).values_list("name", flat=True))
    if user.is_superuser or ADMIN in names:
        names = set(ALL_ROLES)
    user._docket_roles = names
    return names


def has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))


def check_role(user, *roles: str) -> None:
    """Raise PermissionDenied unless the user holds one of the roles."""
    if not has_role(user, *roles):
        raise PermissionDenied(f"This page needs the role {' or '.join(roles)}.")


def role_required(*roles: str):
    """Decorate a view so only users with one of `roles` reach it (403 otherwise)."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            check_role(request.user, *roles)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def role_context(request):
    """Expose the current user's roles to templates, for the navigation."""
    roles = user_roles(request.user)
    return {"roles": roles, "is_docket_admin": ADMIN in roles}


def ensure_role_groups(**kwargs):
    """Create the four role groups with their permissions (idempotent; runs after migrate)."""
    # Looked up in the registry, not imported: the logging filters import this module while
    # Django sets up, before the auth models can be imported.
    group_model = apps.get_model("auth", "Group")
    permission_model = apps.get_model("auth", "Permission")
    for role in ALL_ROLES:
        group, _ = group_model.objects.get_or_create(name=role)
        if role == ADMIN:
            group.permissions.set(permission_model.objects.all())
            continue
        perms = []
        for dotted in ROLE_PERMISSIONS.get(role, []):
            app_label, codename = dotted.split(".")
            perm = permission_model.objects.filter(content_type__app_label=app_label, codename=codename).first()
            if perm:
                perms.append(perm)
        group.permissions.set(perms)
