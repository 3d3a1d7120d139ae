"""Routes of the transactions area under /c/<name>/transactions/: the list, a transactional id, the
hanging transactions, the abort."""

from __future__ import annotations

from django.urls import path

from console.views import transactions

urlpatterns = [
    path("", transactions.transactions_page, name="transactions"),
    path("hanging/", transactions.hanging_page, name="transactions_hanging"),
    path("abort/", transactions.abort_page, name="transaction_abort"),
    # a transactional id is any string, "/" and "hanging" too: a path of its own
    path("id/<path:transactional_id>/", transactions.transaction_detail, name="transaction_detail"),
]
