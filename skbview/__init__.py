"""skbview: presentation helpers for the skbmodel dashboard (static figure export, ...)."""
