from django.urls import path

from triage import views

app_name = "triage"

urlpatterns = [
    path("", views.index, name="index"),
]
