"""Tasks: the plan grammar (and, with the tasks issue, the instruction suite and metrics)."""
