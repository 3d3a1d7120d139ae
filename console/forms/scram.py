"""Forms of the SCRAM users page: set (create or rotate) a credential - the password typed twice and
never rendered back - and delete one with the user name typed to confirm."""

from __future__ import annotations

from django import forms

from console.scram import core

MECHANISM_CHOICES = [(m, m) for m in core.MECHANISMS]


class ScramSetForm(forms.Form):
    user = forms.CharField(
        max_length=core.NAME_MAX, strip=False, help_text="The Kafka user name (User:<name>)."
    )
    mechanism = forms.ChoiceField(choices=MECHANISM_CHOICES, initial="SCRAM-SHA-512")
    iterations = forms.IntegerField(
        min_value=core.MIN_ITERATIONS,
        max_value=core.MAX_ITERATIONS,
        initial=core.DEFAULT_ITERATIONS,
        help_text=f"{core.MIN_ITERATIONS:,} to {core.MAX_ITERATIONS:,} (Kafka's bounds).",
    )
    password = forms.CharField(
        strip=False,
        max_length=core.PASSWORD_MAX,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=f"At least {core.PASSWORD_MIN} characters. Never shown, stored or logged by the console.",
    )
    password_again = forms.CharField(
        strip=False,
        max_length=core.PASSWORD_MAX,
        label="Password again",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
    )

    def clean(self):
        data = super().clean()
        password = data.get("password")
        if password is not None:
            for problem in core.password_errors(password):
                self.add_error("password", problem)
            if data.get("password_again") is not None and data["password_again"] != password:
                self.add_error("password_again", "The two passwords differ.")
        user = data.get("user")
        if user is not None:
            for problem in core.user_errors(user):
                self.add_error("user", problem)
        return data


class ScramDeleteForm(forms.Form):
    user = forms.CharField(max_length=core.NAME_MAX, strip=False, widget=forms.HiddenInput)
    mechanism = forms.ChoiceField(choices=MECHANISM_CHOICES, widget=forms.HiddenInput)
    confirmation = forms.CharField(
        required=False, max_length=core.NAME_MAX, strip=False, label="Type the user name"
    )

    def clean(self):
        data = super().clean()
        if data.get("user") is not None and data.get("confirmation") != data["user"]:
            self.add_error("confirmation", "Type the user name exactly to confirm the deletion.")
        return data
