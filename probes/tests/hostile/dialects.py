"""Which dialects a hostile text is aimed at."""

BOTH = ("sqlite", "postgres")
PG = ("postgres",)
LITE = ("sqlite",)
