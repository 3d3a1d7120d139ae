"""Forms of the topics area: list filters, create one, batch create, add partitions."""

from __future__ import annotations

import json

from django import forms
from django.utils.html import format_html

from console import patterns
from console.forms.configs import KNOWN_TOPIC_CONFIGS, parse_key_values
from console.topics import assignment, policy
from console.topics.batch import BatchParseError, TopicSpec, parse_batch
from console.topics.reads import DEFAULT_PER_PAGE, SORT_KEYS
from console.uploads import UploadError, load_json

MAX_BATCH_UPLOAD_BYTES = 5 * 1024 * 1024


class TopicListForm(forms.Form):
    """The list's query string: search, filters, sort, page."""

    q = forms.CharField(required=False, max_length=500, label="Search")
    regex = forms.BooleanField(required=False, label="Regex")
    internal = forms.BooleanField(required=False, label="Show internal")
    unhealthy = forms.BooleanField(required=False, label="Unhealthy only")
    sort = forms.ChoiceField(required=False, choices=[(k, k) for k in SORT_KEYS])
    desc = forms.BooleanField(required=False)
    page = forms.IntegerField(required=False, min_value=1)
    per_page = forms.IntegerField(required=False, min_value=1, max_value=500)

    def query(self) -> dict:
        self.is_valid()  # invalid fields fall back to their defaults; the valid ones still apply
        data = getattr(self, "cleaned_data", {})  # an unbound form (no query string) has none
        return {
            "query": data.get("q") or "",
            "regex": bool(data.get("regex")),
            "include_internal": bool(data.get("internal")),
            "unhealthy_only": bool(data.get("unhealthy")),
            "sort": data.get("sort") or "name",
            "descending": bool(data.get("desc")),
            "page": data.get("page") or 1,
            "per_page": data.get("per_page") or DEFAULT_PER_PAGE,
        }


def parse_assignment(text: str) -> list[list[int]]:
    """The assignment field: kafka-topics' ``1:2,2:3`` or one partition per line, broker ids separated by
    commas (console/topics/assignment.py)."""
    try:
        return assignment.parse(text)
    except assignment.AssignmentSyntaxError as exc:
        raise forms.ValidationError(f"{exc}. Accepted: {assignment.FORMATS}.") from None


class TopicCreateForm(forms.Form):
    """One topic: name, partitions + replication factor (or an explicit assignment), configs."""

    name = forms.CharField(max_length=policy.TOPIC_NAME_MAX_LENGTH + 50)
    partitions = forms.IntegerField(required=False, min_value=1, help_text="blank = the broker default")
    replication_factor = forms.IntegerField(
        required=False, min_value=1, help_text="blank = the broker default"
    )
    assignment = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "1,2,3\n2,3,1"}),
        help_text="optional: one line per partition, broker ids with the preferred leader first "
        "(or kafka-topics' 1:2,2:3)",
    )
    other_configs = forms.CharField(
        required=False,
        label="Other configs",
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "segment.ms=604800000"}),
        help_text="key=value, one per line",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for key, field in KNOWN_TOPIC_CONFIGS.items():
            self.fields[f"cfg__{key}"] = field.__class__(**_field_kwargs(field), label=key)

    def config_fields(self):
        return [self[f"cfg__{key}"] for key in KNOWN_TOPIC_CONFIGS]

    @classmethod
    def initial_like(cls, like) -> dict:
        """The form filled from another topic's settings (``topics.reads.settings_of``): its counts and
        the configs set on it, the known ones in their own fields and the rest as key=value lines."""
        initial = {"partitions": like.partitions, "replication_factor": like.replication_factor}
        other = []
        for key, value in like.configs.items():
            if key in KNOWN_TOPIC_CONFIGS:
                initial[f"cfg__{key}"] = value
            else:
                other.append(f"{key}={value}")
        initial["other_configs"] = "\n".join(other)
        return {k: v for k, v in initial.items() if v not in (-1, "")}

    def basic_fields(self):
        return [self[n] for n in ("name", "partitions", "replication_factor", "assignment", "other_configs")]

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        errors = policy.topic_name_errors(name)
        if errors:
            raise forms.ValidationError(errors)
        return name

    def clean_assignment(self):
        text = self.cleaned_data.get("assignment") or ""
        return parse_assignment(text) if text.strip() else None

    def clean(self):
        data = super().clean()
        if data.get("assignment") and (data.get("partitions") or data.get("replication_factor")):
            self.add_error(
                "assignment", "Give either an assignment or partitions and replication factor, not both."
            )
        configs, errors = parse_key_values(data.get("other_configs") or "")
        for e in errors:
            self.add_error("other_configs", e)
        for key in KNOWN_TOPIC_CONFIGS:
            value = data.get(f"cfg__{key}")
            if value not in (None, ""):
                if key in configs:
                    self.add_error("other_configs", f"'{key}' is set twice.")
                configs[key] = str(value)
        data["configs"] = configs
        return data

    def spec(self) -> TopicSpec:
        d = self.cleaned_data
        assignment = tuple(tuple(r) for r in d["assignment"]) if d.get("assignment") else None
        return TopicSpec(
            d["name"],
            -1 if assignment else (d.get("partitions") or -1),
            -1 if assignment else (d.get("replication_factor") or -1),
            assignment,
            d["configs"],
        )


def _field_kwargs(field: forms.Field) -> dict:
    kwargs = {"required": False, "help_text": field.help_text}
    if isinstance(field, forms.ChoiceField):
        kwargs["choices"] = field.choices
    if isinstance(field, forms.IntegerField):
        kwargs["min_value"] = field.min_value
    return kwargs


class BatchCreateForm(forms.Form):
    """Pasted text or an uploaded file, in YAML, JSON or CSV."""

    text = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 12}), label="Topics")
    upload = forms.FileField(required=False, label="or upload a file")
    format = forms.ChoiceField(
        choices=[("", "detect"), ("yaml", "YAML"), ("json", "JSON"), ("csv", "CSV")], required=False
    )

    def clean(self):
        data = super().clean()
        text, filename = data.get("text") or "", ""
        upload = data.get("upload")
        if upload is not None:
            if upload.size > MAX_BATCH_UPLOAD_BYTES:
                raise forms.ValidationError(
                    f"The file is larger than {MAX_BATCH_UPLOAD_BYTES // 1024 // 1024} MiB."
                )
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text.") from None
            filename = upload.name
        if not text.strip():
            raise forms.ValidationError("Paste topics or upload a file.")
        try:
            data["specs"] = parse_batch(text, data.get("format") or None, filename)
        except BatchParseError as exc:
            self.problems = exc.problems
            raise forms.ValidationError([str(p) for p in exc.problems]) from None
        return data


class AddPartitionsForm(forms.Form):
    total_count = forms.IntegerField(min_value=1, label="New total partition count")
    assignment = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="optional: one line per NEW partition, broker ids with the preferred leader first",
    )

    def clean_assignment(self):
        text = self.cleaned_data.get("assignment") or ""
        return parse_assignment(text) if text.strip() else None


def _lines(text: str) -> list[str]:
    return [p.strip() for line in (text or "").splitlines() for p in line.split(",") if p.strip()]


class TopicPolicyForm(forms.Form):
    """The cluster's topic policy as an admin edits it (blank = unrestricted / the default)."""

    max_partitions = forms.IntegerField(required=False, min_value=1, help_text="per topic")
    allowed_replication_factors = forms.CharField(required=False, help_text="e.g. 3 or 2, 3 (blank = any)")
    allowed_config_keys = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="one per line or comma-separated (blank = any)",
    )
    config_ranges = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        # the example is what to type: raw values (class "raw": the page-values scan leaves it be)
        help_text=format_html(
            'JSON, e.g. <code class="raw">{}</code>',
            '{"retention.ms": {"min": 60000, "max": 604800000}, "cleanup.policy": {"choices": ["delete"]}}',
        ),
    )
    name_pattern = forms.CharField(
        required=False,
        max_length=500,
        help_text=r"a regular expression topic names must match, e.g. [a-z]+\..+",
    )
    protected_topics = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="regular expressions (one per line) of topics that cannot be deleted",
    )
    max_batch_size = forms.IntegerField(required=False, min_value=1, help_text="topics per batch create")
    namespace_rules = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=format_html(
            "JSON: per topic-name prefix, the configs a new topic there must set and the defaults it gets "
            'for the keys it leaves out (a longer prefix wins), e.g. <code class="raw">{}</code>',
            '{"payments.": {"required": ["retention.ms"], "defaults": {"min.insync.replicas": "2"}}}',
        ),
    )

    @classmethod
    def initial_from(cls, rules) -> dict:
        return {
            "max_partitions": rules.max_partitions,
            "allowed_replication_factors": ", ".join(str(r) for r in rules.allowed_replication_factors),
            "allowed_config_keys": "\n".join(rules.allowed_config_keys),
            "config_ranges": json.dumps(dict(rules.config_ranges), indent=1) if rules.config_ranges else "",
            "name_pattern": rules.name_pattern,
            "protected_topics": "\n".join(rules.protected_topics),
            "max_batch_size": rules.max_batch_size,
            "namespace_rules": json.dumps(dict(rules.namespace_rules), indent=1)
            if rules.namespace_rules
            else "",
        }

    def clean_allowed_replication_factors(self) -> list[int]:
        try:
            values = [int(v) for v in _lines(self.cleaned_data["allowed_replication_factors"])]
        except ValueError:
            raise forms.ValidationError("Replication factors are whole numbers, e.g. 2, 3.") from None
        if any(v < 1 for v in values):
            raise forms.ValidationError("Replication factors are at least 1.")
        return values

    def clean_allowed_config_keys(self) -> list[str]:
        return _lines(self.cleaned_data["allowed_config_keys"])

    def _json(self, field: str):
        """The field's JSON document (None when blank), a syntax error placed by line and column."""
        text = self.cleaned_data[field].strip()
        if not text:
            return None
        try:
            return load_json(text)  # bounded: size and nesting depth
        except UploadError as exc:
            raise forms.ValidationError(f"Line {exc.line}, column {exc.column}: {exc.message}") from None

    def clean_config_ranges(self) -> dict:
        data = self._json("config_ranges")
        if data is None:
            return {}
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise forms.ValidationError('Write {"key": {"min": n, "max": n} or {"choices": [...]}}.')
        for key, bounds in data.items():
            unknown = set(bounds) - {"min", "max", "choices"}
            if unknown:
                raise forms.ValidationError(
                    f"'{key}': unknown bound {', '.join(sorted(unknown))} (use min, max, choices)."
                )
        return data

    def clean_namespace_rules(self) -> dict:
        data = self._json("namespace_rules")
        if data is None:
            return {}
        errors = policy.namespace_rule_errors(data)
        if errors:
            raise forms.ValidationError(errors)
        return {
            prefix: {
                "required": list(dict.fromkeys(entry.get("required") or ())),
                "defaults": {k: str(v) for k, v in (entry.get("defaults") or {}).items()},
            }
            for prefix, entry in data.items()
        }

    def clean(self):
        data = super().clean()
        allowed = data.get("allowed_config_keys") or []
        if allowed and data.get("namespace_rules"):
            named = {k for e in data["namespace_rules"].values() for k in [*e["required"], *e["defaults"]]}
            outside = sorted(named - set(allowed))
            if outside:
                self.add_error(
                    "namespace_rules",
                    f"{', '.join(outside)}: not in allowed_config_keys, so no topic could set "
                    "(or be given) them.",
                )
        return data

    def _regex(self, text: str) -> str:
        try:  # the engine the policy will match with (RE2: linear time)
            patterns.compile_pattern(text)
        except patterns.PatternError as exc:
            raise forms.ValidationError(f"'{text}' is not a valid regular expression: {exc}") from None
        return text

    def clean_name_pattern(self) -> str:
        text = self.cleaned_data["name_pattern"].strip()
        return self._regex(text) if text else ""

    def clean_protected_topics(self) -> list[str]:
        lines = [line.strip() for line in self.cleaned_data["protected_topics"].splitlines() if line.strip()]
        return [self._regex(line) for line in lines]
