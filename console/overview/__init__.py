"""The cluster overview's "what needs me" part: ``core`` ranks topics with partition problems, lagging
groups and full brokers (pure); ``attention`` gathers them from what the console already keeps (the
metadata snapshot, the newest telemetry snapshot, the database) for the page. It sits above the areas
it reads (topics, telemetry, alerts, audit, requests), so it is a package of its own, not a module of
``clusters`` (which those areas import)."""

__all__ = ["attention", "core"]
