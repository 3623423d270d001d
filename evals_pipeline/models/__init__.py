"""The type lattice: pydantic models validated at every boundary between layers."""
