"""Metrics: the sufficient-statistics protocol, the registry and the built-in families."""
