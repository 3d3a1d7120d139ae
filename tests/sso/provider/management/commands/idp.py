"""Set up the test provider: `idp client ID SECRET URI...` (a web client, authorization code),
`idp service ID SECRET` (a confidential client-credentials client: it gets JWT access tokens, see
provider/tokens.py), `idp user NAME PASSWORD GROUP...`."""

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from oauth2_provider.models import Application


class Command(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("what", choices=["client", "service", "user"])
        parser.add_argument("name")
        parser.add_argument("secret")
        parser.add_argument("rest", nargs="*")

    def handle(self, what, name, secret, rest, **options):
        if what in ("client", "service"):
            grants = {
                "client": dict(
                    authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
                    redirect_uris=" ".join(rest),
                    post_logout_redirect_uris=" ".join(u.split("/sso/")[0] + "/login/" for u in rest),
                    skip_authorization=True,
                ),
                "service": dict(authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS),
            }
            Application.objects.filter(client_id=name).delete()
            Application.objects.create(
                name=name,
                client_id=name,
                client_secret=secret,
                client_type=Application.CLIENT_CONFIDENTIAL,
                algorithm=Application.RS256_ALGORITHM,
                **grants[what],
            )
            return
        user, _ = User.objects.get_or_create(username=name)
        user.set_password(secret)
        user.email = f"{name}@example.org"
        user.first_name = name.title()
        user.save()
        user.groups.set([Group.objects.get_or_create(name=g)[0] for g in rest])
