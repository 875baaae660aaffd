"""The admin's "Register a warehouse" form: name, kind, and the connection URL.

The URL is a password field that is never rendered back; it goes to the warehouses file
(`probes/warehouses.py` `warehouse_register`, mode 0600), never to the database.
"""

from django import forms

from probes.models import CONNECTED_DIALECTS, Dialect, Warehouse
from probes.warehouses import WarehouseUnavailable, check_dsn_matches_dialect


class WarehouseSetupForm(forms.Form):
    name = forms.SlugField(max_length=64, help_text="Letters, digits, - and _: how queries and judges name it.")
    dialect = forms.ChoiceField(
        choices=[(value, label) for value, label in Dialect.choices if value in CONNECTED_DIALECTS], label="Kind"
    )
    url = forms.CharField(
        label="Connection URL",
        max_length=2000,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text="postgresql://docket_reader:PASSWORD@host:5432/warehouse, or sqlite:////absolute/path.sqlite3. "
        "Stored in the warehouses file (readable by Docket's owner only), never in the database or on a page.",
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean_name(self):
        name = self.cleaned_data["name"]
        if Warehouse.objects.filter(name=name).exists():
            raise forms.ValidationError(f"A warehouse named {name!r} is registered already: choose another name.")
        return name

    def clean(self):
        data = super().clean()
        if data.get("url") and data.get("dialect"):
            try:
                check_dsn_matches_dialect(data["url"], data["dialect"])
            except WarehouseUnavailable as exc:
                self.add_error("url", str(exc))
            except KeyError:
                self.add_error("dialect", "Choose a kind Docket knows.")
        return data
