from django.urls import path

from judges import views

app_name = "judges"

urlpatterns = [
    path("", views.index, name="index"),
]
