"""The console's template tag libraries: ``console_format`` (human values, the raw one on hover)."""
