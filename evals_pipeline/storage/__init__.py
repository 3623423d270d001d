"""Where results live: the storage root, session Parquet files and run-scoped tables."""
