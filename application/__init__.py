"""The application layer: the service a backend embeds, and the ports it needs."""
