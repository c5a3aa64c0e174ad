"""Chapter drivers: a notebook hands its parameters to one of these and gets stored runs back."""
