# Tests of the cost module.
