from django.urls import path

from probes import views

app_name = "probes"

urlpatterns = [
    path("", views.index, name="index"),
    path("<slug:name>/catalogue/", views.catalogue, name="catalogue"),
]
