"""The Impact Agent: each pending feature's footprint foreseen, its optional model call and its prompt line."""
