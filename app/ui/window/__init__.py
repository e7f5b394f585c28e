"""The main window, one module per job; app/ui/main_window.py assembles them."""
