from django.urls import path

from probes import setup_views, views

app_name = "probes"

urlpatterns = [
    path("", views.index, name="index"),
    path("add/", setup_views.warehouse_add, name="add"),
    path("<slug:name>/catalogue/", views.catalogue, name="catalogue"),
    path("<slug:name>/test/", setup_views.warehouse_test, name="test"),
    path("<slug:name>/refresh/", setup_views.warehouse_refresh, name="refresh"),
    path("<slug:name>/refresh/<int:pk>/", setup_views.refresh_status, name="refresh_status"),
]
