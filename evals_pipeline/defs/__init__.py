"""The Dagster wiring: partitions, assets, IO, resources, sensors and automation."""
