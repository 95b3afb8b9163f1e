"""SMP's module path, served by smd (see smdistributed/__init__.py)."""
