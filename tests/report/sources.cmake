# Tests of the report module.
