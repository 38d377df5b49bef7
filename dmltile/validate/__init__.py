"""The validation layer: reading documents, the rule table, feature levels, reports, JSON Schema."""
