"""The run's low-level parts that runner, attempt/, checks/ and parallel/ all use: the books, the feature logs, the queue order."""
