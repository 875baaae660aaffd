"""The audit log's rules beyond django-auditlog: who acted, nothing edited, entries to read and export.

django-auditlog records every create, change and delete of the models `config/audit.py`
lists (its middleware names the logged-in user). Here:

- `acting(user)` names the actor for writes made outside a request (a command, a service
  given a user); an audited row's own "made by" field (`ACTOR_FIELDS`) is the fallback;
- `audit_record_change` records a change made by a queryset update, which sends no signal;
- an entry, once written, is never changed or deleted (`refuse_entry_change`,
  `refuse_entry_delete`; the admin is read-only too);
- `audit_entries` and `audit_export_rows` are what the audit page shows and exports.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

from auditlog.models import LogEntry
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied

from config.audit import ACTOR_FIELDS, audited_model_labels

_acting: ContextVar = ContextVar("docket_audit_actor", default=None)


@contextlib.contextmanager
def acting(user):
    """Name `user` as the actor of the audited writes inside this block (None: the system)."""
    token = _acting.set(user)
    try:
        yield
    finally:
        _acting.reset(token)


def fill_actor(sender, instance, log_entry=None, *, made_by_field=True, **kwargs):
    """Name the actor of an entry written outside a request (auditlog's post_log signal)."""
    if log_entry is None or log_entry.actor_id is not None:
        return
    actor = _acting.get()
    field = ACTOR_FIELDS.get(sender._meta.label) if made_by_field else None
    actor_id = getattr(actor, "pk", None) or (getattr(instance, f"{field}_id", None) if field else None)
    if actor_id is not None:
        # An update of the entry being written, not an edit: the save guard is for old entries.
        LogEntry.objects.filter(pk=log_entry.pk).update(actor_id=actor_id)
        log_entry.actor_id = actor_id


def refuse_entry_change(sender, instance, **kwargs):
    """An audit entry is written once: a save of an existing one is refused."""
    if instance.pk is not None and LogEntry.objects.filter(pk=instance.pk).exists():
        raise PermissionDenied("An audit log entry is never changed.")


def refuse_entry_delete(sender, instance, **kwargs):
    """An audit entry is never deleted (the whole-database wipe of reset_demo is SQL, not a delete)."""
    raise PermissionDenied("An audit log entry is never deleted.")


def audit_record_change(instance, changes: dict) -> LogEntry:
    """Record a change made without a save (a conditional UPDATE): {"field": [old, new]}."""
    as_text = {field: [None if v is None else str(v) for v in pair] for field, pair in changes.items()}
    entry = LogEntry.objects.log_create(instance, action=LogEntry.Action.UPDATE, changes=as_text)
    # Whoever made the row did not necessarily make this change: only a named actor counts.
    fill_actor(type(instance), instance, log_entry=entry, made_by_field=False)
    return entry


def audited_content_types() -> list[ContentType]:
    """The content types of the audited models, in the order config/audit.py lists them."""
    models = [apps.get_model(label) for label in audited_model_labels()]
    by_model = ContentType.objects.get_for_models(*models)
    return [by_model[model] for model in models]


AUDIT_ORDER = ("-timestamp", "-pk")


def audit_entries():
    """Every entry of the audited models, newest first, with actor and model loaded."""
    return (
        LogEntry.objects.filter(content_type__in=audited_content_types())
        .select_related("actor", "content_type")
        .order_by(*AUDIT_ORDER)
    )


EXPORT_COLUMNS = ["id", "timestamp", "actor", "action", "model", "object_id", "object", "changes", "remote_addr"]


def audit_export_record(entry: LogEntry) -> dict:
    """One entry as the CSV/JSON export writes it."""
    return {
        "id": entry.pk,
        "timestamp": entry.timestamp.isoformat(),
        "actor": entry.actor.get_username() if entry.actor_id else "system",
        "action": str(entry.get_action_display()),
        "model": f"{entry.content_type.app_label}.{entry.content_type.model}",
        "object_id": entry.object_pk,
        "object": entry.object_repr,
        "changes": entry.changes_dict,
        "remote_addr": entry.remote_addr or "",
    }
