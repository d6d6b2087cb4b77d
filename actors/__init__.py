"""actors: Troupe's runtime — Ray actors, the Redis message bus and storage."""
