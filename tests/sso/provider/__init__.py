"""A real OpenID Connect provider for the single sign-on tests: a small Django project on
django-oauth-toolkit (OIDC enabled, RS256 key made by the test fixture), run as its own process.
Its users' Django groups go out in the ID token's "groups" claim."""
