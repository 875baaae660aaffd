from django.urls import path

from labelling import views

app_name = "labelling"

urlpatterns = [
    path("", views.index, name="index"),
]
