"""The compiled part of the console: the Metadata decoder (console/kafka/_metadata.c). Everything
else about the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("console.kafka._metadata", ["console/kafka/_metadata.c"]),
    ]
)
