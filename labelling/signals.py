"""Signal receivers of the labelling app, connected in `LabellingConfig.ready()`."""

from labelling.immutability import flush_allowed


def register_sqlite_function(sender, connection, **kwargs):
    """Give each new SQLite connection the function the immutability triggers call."""
    if connection.vendor == "sqlite":
        connection.connection.create_function("docket_flush_allowed", 0, flush_allowed, deterministic=False)
