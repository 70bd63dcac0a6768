"""Modal screens: help, the raw JSON of an event, jump to an event."""
