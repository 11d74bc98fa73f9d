"""ImageInfraValidator: the serving check in InfraValidator's place."""
