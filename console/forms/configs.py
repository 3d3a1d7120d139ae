"""Forms of the config editor: a few change rows (op, key, value) turned into ConfigChanges."""

from __future__ import annotations

from django import forms

from console.configs.plan import OPS, looks_secret
from console.kafka import ConfigChange

CHANGE_ROWS = 5
OP_CHOICES = [
    ("SET", "set"),
    ("DELETE", "delete (reset to default)"),
    ("APPEND", "append to list"),
    ("SUBTRACT", "subtract from list"),
]

# Typed inputs for the topic configs operators set most (the rest are free text).
KNOWN_TOPIC_CONFIGS: dict[str, forms.Field] = {
    "cleanup.policy": forms.ChoiceField(
        required=False,
        choices=[
            ("", "(broker default)"),
            ("delete", "delete"),
            ("compact", "compact"),
            ("delete,compact", "delete,compact"),
        ],
        help_text="delete: drop old segments; compact: keep the latest value per key",
    ),
    "retention.ms": forms.IntegerField(required=False, min_value=-1, help_text="-1 keeps data forever"),
    "retention.bytes": forms.IntegerField(
        required=False, min_value=-1, help_text="per partition; -1 = no limit"
    ),
    "min.insync.replicas": forms.IntegerField(required=False, min_value=1),
    "max.message.bytes": forms.IntegerField(required=False, min_value=0),
    "segment.bytes": forms.IntegerField(required=False, min_value=14),
    "compression.type": forms.ChoiceField(
        required=False,
        choices=[("", "(broker default)")]
        + [(c, c) for c in ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")],
    ),
}


def parse_key_values(text: str) -> tuple[dict[str, str], list[str]]:
    """``key=value`` per line (blank lines and # comments ignored) → (configs, errors)."""
    out, errors = {}, []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            errors.append(f"Line {number}: write key=value, not '{line}'.")
            continue
        if key.strip() in out:
            errors.append(f"Line {number}: '{key.strip()}' is given twice.")
            continue
        out[key.strip()] = value.strip()
    return out, errors


class ConfigChangesForm(forms.Form):
    """Up to CHANGE_ROWS changes; empty rows are ignored."""

    def __init__(self, *args, keys: list[str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.keys = keys or []
        for i in range(CHANGE_ROWS):
            self.fields[f"op_{i}"] = forms.ChoiceField(
                choices=OP_CHOICES, initial="SET", required=False, label="Operation"
            )
            self.fields[f"key_{i}"] = forms.CharField(
                required=False,
                max_length=255,
                label="Config",
                widget=forms.TextInput(attrs={"list": "config-keys"}),
            )
            self.fields[f"value_{i}"] = forms.CharField(required=False, max_length=10_000, label="Value")

    def hide_secret_values(self, sensitive: set[str] = frozenset()) -> None:
        """Values of secret configs (Kafka's sensitive ones, or any whose name looks secret) are
        write-only: their inputs never render a value back, so they are typed again to apply."""
        for i in range(CHANGE_ROWS):
            key = str(self.data.get(f"key_{i}") or "").strip()
            if key and (key in sensitive or looks_secret(key)):
                field = self.fields[f"value_{i}"]
                field.widget = forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"})
                field.help_text = "Secret: never shown again. Type it again to validate or apply."
                self._bound_fields_cache.pop(f"value_{i}", None)  # bound before: rebuild with the new help

    def rows(self):
        return [(self[f"op_{i}"], self[f"key_{i}"], self[f"value_{i}"]) for i in range(CHANGE_ROWS)]

    def clean(self):
        data = super().clean()
        changes = []
        for i in range(CHANGE_ROWS):
            key = (data.get(f"key_{i}") or "").strip()
            op = data.get(f"op_{i}") or "SET"
            value = data.get(f"value_{i}") or ""
            if not key:
                if value:
                    self.add_error(f"key_{i}", "Name the config this value is for.")
                continue
            if op not in OPS:
                self.add_error(f"op_{i}", "Unknown operation.")
                continue
            if op in ("APPEND", "SUBTRACT") and not value.strip():
                self.add_error(f"value_{i}", f"{op.lower()} needs a value.")
                continue
            changes.append(ConfigChange(key, op, None if op == "DELETE" else value))
        if not changes and not self.errors:
            raise forms.ValidationError("Enter at least one change.")
        data["changes"] = changes
        return data
