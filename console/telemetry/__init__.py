"""Cluster snapshots into the Parquet lake, and the capacity pipeline (pyarrow or Spark) as an Operation.

``snapshots`` (the collector), ``summary`` (each cluster's summary row for the fleet home, written
with its snapshot), ``sizes`` (topic sizes from the latest snapshot, for the topic
pages), ``newest`` (the newest snapshot's group lag and brokers' disks, for the cluster
overview), ``names`` (the topic and group names of the latest snapshot, for the cross-cluster search),
``lakefiles`` (a cluster's newest snapshot file, and the bounded cache of what was read from it),
``capacity`` (start a pipeline run, read its reports for the pages), ``worker`` (the ``pipeline.run``
kind).
"""

__all__ = ["capacity", "lakefiles", "names", "newest", "sizes", "snapshots", "summary", "worker"]
