"""Reports of a run: the HTML page (data, model, timeline, charts), JSON and JUnit, and the last run's text summary."""
