"""The app's widgets, one module per pane (and the status line)."""
