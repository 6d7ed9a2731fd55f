# Tests of the graph module.
