# Sources of the report module.
