"""Roles: four groups, each holding the Django permissions its pages check.

Every page already requires login (Django's LoginRequiredMiddleware); a view then names the
permission it needs with `@permission_required(...)`, which answers 403 (never a login
redirect) to a signed-in user who lacks it, naming the roles that hold it. No view checks a
group's name: a role
reaches a page because its group holds the page's permission (`ROLE_PERMISSIONS`). The
`admin` group holds every permission, and its members are staff, so they reach the admin
site (`config/signals.py` `admins_are_staff`). Superusers hold every permission too.
"""

from functools import wraps

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied

LABELLER = "labeller"
ANALYST = "analyst"
ML_ENGINEER = "ml_engineer"
ADMIN = "admin"
ALL_ROLES = (LABELLER, ANALYST, ML_ENGINEER, ADMIN)

# The permission each kind of page or action checks.
LABEL_QUERIES = "labelling.add_label"  # the labeller's queue
VIEW_GOLDSETS = "labelling.view_goldset"  # gold sets, their versions, previews
# Publish, import, adjudicate, audit, agreement, exports, the fitness thresholds; seeing every label.
# Not change_goldset: the gold set's other settings (label reveal) are an admin's, in the admin site.
MANAGE_GOLDSETS = "labelling.add_goldsetversion"
MANAGE_TAXONOMIES = "labelling.change_taxonomy"
VIEW_LABELLER_PROGRESS = "auth.view_user"
VIEW_JUDGES = "judges.view_judge"  # judges, the dashboard, the loop lab
ADD_JUDGE = "judges.add_judge"
CHANGE_JUDGE = "judges.change_judge"
VIEW_VERDICT = "judges.view_verdict"  # a live verdict (analysts see those)
VIEW_RUNS = "judges.view_calibrationrun"  # a calibration run and its verdicts
START_RUN = "judges.add_calibrationrun"
CHANGE_RUN = "judges.change_calibrationrun"  # cancel, resume
SET_JUDGE_BASE_URL = "config.set_judge_base_url"
VIEW_TRIAGE = "triage.view_triageitem"  # the analyst queue and its lists
WORK_TRIAGE = "triage.change_triageitem"  # claim, decide, undo, release
REQUEUE_LIVE_QUERY = "triage.change_livequery"
OVERRIDE_TRIAGE = "config.override_triage"  # reopen a resolution, decide without the claim
VIEW_MONITORING = "triage.view_estimatesnapshot"  # the live dashboard
RUN_MONITORING = "triage.add_estimatesnapshot"
ACKNOWLEDGE_ALERT = "triage.change_alert"
VIEW_WAREHOUSES = "probes.view_warehouse"
MANAGE_WAREHOUSES = "probes.add_warehouse"  # register one, test its connection, refresh its catalogue (admins)
ALLOW_RESULT_EGRESS = "config.allow_result_egress"
VIEW_AUDIT_LOG = "auditlog.view_logentry"

# The permissions each group holds; admin holds all of them.
ROLE_PERMISSIONS = {
    LABELLER: [LABEL_QUERIES, VIEW_GOLDSETS, "labelling.view_label", "labelling.view_query"],
    ANALYST: [
        "labelling.view_query",
        VIEW_TRIAGE,
        WORK_TRIAGE,
        REQUEUE_LIVE_QUERY,
        VIEW_MONITORING,
        VIEW_VERDICT,
    ],
    ML_ENGINEER: [
        "labelling.view_query",
        VIEW_GOLDSETS,
        MANAGE_GOLDSETS,
        VIEW_JUDGES,
        ADD_JUDGE,
        CHANGE_JUDGE,
        VIEW_VERDICT,
        VIEW_RUNS,
        START_RUN,
        CHANGE_RUN,
        VIEW_MONITORING,
        RUN_MONITORING,
        VIEW_WAREHOUSES,
    ],
}


def roles_holding(*perms: str) -> list[str]:
    """Return the roles whose groups hold every one of `perms` (admin when no other does)."""
    return [role for role, held in ROLE_PERMISSIONS.items() if set(perms) <= set(held)] or [ADMIN]


def permission_check(user, *perms: str) -> None:
    """Raise PermissionDenied, naming the roles that would do, unless the user holds every one of `perms`."""
    if not user.has_perms(perms):
        raise PermissionDenied(f"This page needs the role {' or '.join(roles_holding(*perms))}.")


def permission_required(*perms: str, refusal=None):
    """Decorate a view so only users holding every one of `perms` reach it (403 otherwise).

    An anonymous visitor never gets here: LoginRequiredMiddleware sends them to the login page.
    `refusal`, a function of no arguments, gives the 403 page a reason of the page's own
    (e.g. who can do it instead) in place of the roles alone.
    """

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if refusal is not None and not request.user.has_perms(perms):
                raise PermissionDenied(refusal())
            permission_check(request.user, *perms)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def user_roles(user) -> set[str]:
    """Return the role names a user holds, for display; admins and superusers hold every role."""
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


def users_holding(perm: str, *, limit: int = 10) -> list[str]:
    """Return the usernames of active users who hold `perm` (by group, directly or as superusers).

    For pages that must say who can do what the reader cannot ("awaiting an adjudicator: …").
    Permissions come from the ModelBackend alone (the axes backend only refuses locked-out logins).
    """
    return list(
        get_user_model()
        .objects.with_perm(perm, backend="django.contrib.auth.backends.ModelBackend")
        .order_by("username")
        .values_list("username", flat=True)[:limit]
    )
