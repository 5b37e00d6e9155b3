"""Request validation with the API's rules and wording, and what the installed SDK says a request may hold."""
