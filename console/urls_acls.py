"""Routes of the ACL area, under /c/<name>/acls/."""

from __future__ import annotations

from django.urls import path

from console.views import acls

urlpatterns = [
    path("", acls.acl_list, name="acl_list"),
    path("new/", acls.acl_new, name="acl_new"),
    path("delete/", acls.acl_delete, name="acl_delete"),
    path("apply/", acls.acl_apply, name="acl_apply"),
    path("effective/", acls.acl_effective, name="acl_effective"),
    path("export/", acls.acl_export, name="acl_export"),
]
