"""Repositories: the only code that reads or writes SQL. Each public method is one transaction and
returns plain records (`storage.record_types`). Reach them through a `Store` (`store.samples`, ...)."""
