"""API keys in the admin: staff create one for a user (the key is shown once, in the message
after saving: only its hash is stored), see when each was last used, and revoke them. Keys are
never deleted here, so the record of who held which key stays."""

from django.contrib import admin, messages

from ..models import ApiKey
from .versions import StaffAdmin


@admin.register(ApiKey)
class ApiKeyAdmin(StaffAdmin):
    """Staff see, create and revoke keys (``StaffAdmin``: readable and changeable by any active
    staff user, nothing deleted), and only here may they add a row."""

    list_display = ("prefix", "user", "name", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("prefix", "name", "user__username")
    actions = ["revoke"]

    def has_add_permission(self, request):
        return self._is_staff(request)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("user", "name")
        return ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.get_fields(request, obj)

    def save_model(self, request, obj, form, change):
        if change:
            return
        record, key = ApiKey.objects.create_key(obj.user, obj.name)
        obj.pk, obj.prefix, obj.hashed, obj.created_at = (record.pk, record.prefix,
                                                          record.hashed, record.created_at)
        messages.warning(request, f"The new key for {obj.user}: {key}  Copy it now: it is not "
                                  f"shown again (only its hash is stored).")

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request, queryset):
        for key in queryset.filter(revoked_at=None):
            key.revoke()
        messages.success(request, "Revoked. Requests with these keys now get 401.")
