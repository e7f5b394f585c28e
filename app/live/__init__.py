"""The live series a run's charts and tables draw, and History replays: Qt-free, below the window (a run in a
process of its own builds them too, so its child imports nothing of ``app.ui``)."""
