"""Running methods over datasets."""
