"""Signal receivers of the config app, connected in `ConfigConfig.ready()`."""

from config.roles import ensure_role_groups


def role_groups_after_migrate(sender, **kwargs):
    """Keep the four role groups and their permissions in step with the migrated models."""
    ensure_role_groups()
