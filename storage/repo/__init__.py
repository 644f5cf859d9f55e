"""Repositories: the only code that reads or writes SQL. Each public method is one transaction and
returns plain records (`storage.records`). Reach them through a `Store` (`store.samples`, ...)."""
