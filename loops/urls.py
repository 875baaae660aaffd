from django.urls import path

from loops import views

app_name = "loops"

urlpatterns = [
    path("", views.loop_lab, name="lab"),
    path("replay-card/", views.replay_card, name="replay-card"),
]
