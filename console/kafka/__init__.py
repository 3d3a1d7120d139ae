"""The only place that imports a Kafka client: typed results, one error type."""
