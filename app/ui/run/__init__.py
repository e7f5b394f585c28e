"""Running a plan: the run driver, the Results Display and what it shows live (its charts: app.ui.charts)."""
