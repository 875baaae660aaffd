"""Signal receivers of the config app, connected in `ConfigConfig.ready()`."""

from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.db import DEFAULT_DB_ALIAS

from config.roles import ADMIN, ensure_role_groups


def role_groups_after_migrate(sender, using=DEFAULT_DB_ALIAS, **kwargs):
    """Keep the four role groups and their permissions in step with the migrated models.

    Django creates each app's permissions after that app's migrate, and config comes before
    the apps whose permissions the roles grant; so every app's are created first.
    """
    for app_config in apps.get_app_configs():
        create_permissions(app_config, verbosity=0, using=using)
    ensure_role_groups()


def admins_are_staff(sender, instance, action, reverse, pk_set, **kwargs):
    """Make a user staff when the admin role is granted, and not staff when it is taken away.

    Connected to `m2m_changed` of `User.groups`, so it holds however the role is granted: the
    admin site, `user.groups.add`, `group.user_set.add`, `seed_demo`. Superusers stay staff.
    """
    group_model = apps.get_model("auth", "Group")
    user_model = sender._meta.get_field("user").related_model
    if action == "pre_clear":
        if reverse:
            instance._docket_cleared_users = list(instance.user_set.values_list("pk", flat=True))
        else:
            instance._docket_was_admin = instance.groups.filter(name=ADMIN).exists()
        return
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    granted = action == "post_add"
    if reverse:
        if instance.name != ADMIN:
            return
        user_ids = instance.__dict__.pop("_docket_cleared_users", []) if action == "post_clear" else pk_set
    else:
        touches_admin = (
            instance.__dict__.pop("_docket_was_admin", False)
            if action == "post_clear"
            else group_model.objects.filter(pk__in=pk_set, name=ADMIN).exists()
        )
        if not touches_admin:
            return
        user_ids = [instance.pk]
        instance.is_staff = granted or instance.is_superuser
    users = user_model.objects.filter(pk__in=user_ids)
    if not granted:
        users = users.filter(is_superuser=False)
    users.update(is_staff=granted)
