"""Kafka Operator Console: the Django project and its single app."""
