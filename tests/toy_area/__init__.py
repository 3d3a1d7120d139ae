"""A toy area, "retention": a topic's retention.ms listed and changed, a held kind for the change, an
API view, a page and a command line - the shape of every console area, as a test fixture.

tests/unit/test_toy_area.py registers it with one line per door (the held module, an API route, a
page route, a CLI module) and drives it through all of them; docs/architecture.md ("Adding an
area") is the recipe it follows. Nothing in console/ knows it.

``actions`` (the reads and the mutation: authorised, gated, audited), ``held`` (its policy kind
and held kind), ``api`` (the API view), ``pages`` (the page), ``cli`` (``manage.py kafka retention``),
``urls`` (the test's route table: the console's plus one line per web door).
"""

__all__ = ["actions", "api", "cli", "held", "pages"]
