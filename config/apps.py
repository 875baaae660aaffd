from django.apps import AppConfig
from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_migrate, pre_delete, pre_save

from config.signals import admins_are_staff, role_groups_after_migrate


class ConfigConfig(AppConfig):
    """The project app: roles, the home page, the audit log and cross-app commands such as seed_demo."""

    name = "config"
    verbose_name = "Docket"

    def ready(self):
        # Imported here: auditlog's models can be imported only once the apps are loaded.
        from auditlog.models import LogEntry  # noqa: PLC0415 — models load after apps are ready
        from auditlog.signals import post_log  # noqa: PLC0415 — imports auditlog's models

        from config import audit_log  # noqa: PLC0415 — imports auditlog's models

        post_migrate.connect(role_groups_after_migrate, sender=self)
        user_groups = get_user_model().groups.through
        m2m_changed.connect(admins_are_staff, sender=user_groups, dispatch_uid="docket-admins-are-staff")
        post_log.connect(audit_log.fill_actor, dispatch_uid="docket-audit-actor")
        pre_save.connect(audit_log.refuse_entry_change, sender=LogEntry, dispatch_uid="docket-audit-no-change")
        pre_delete.connect(audit_log.refuse_entry_delete, sender=LogEntry, dispatch_uid="docket-audit-no-delete")
